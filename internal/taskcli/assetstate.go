package taskcli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/statevalue"
)

// assetStateTarget is the asset `weir asset-state` works on: --name, --uri,
// or the one concrete asset the task declares (SPEC AS-2).
type assetStateTarget struct {
	name, uri string
}

// resolve returns the asset state access and the asset reference; without
// --name or --uri it asks the Execution API which assets the task declares
// and takes the only one (exit 2 when there are none or several). The
// access goes through the worker-side backend when WEIR_STATE_BACKEND is
// set (SPEC BE-2).
func (f *assetStateTarget) resolve(cmd *cobra.Command) (operator.AssetState, core.AssetRef, error) {
	if f.name != "" && f.uri != "" {
		return nil, core.AssetRef{}, &ExitError{Code: exitInvalid, Err: errors.New("pass --name or --uri, not both")}
	}
	c, err := execclient.ClientFromEnv()
	if err != nil {
		return nil, core.AssetRef{}, &ExitError{Code: exitFailed, Err: err}
	}
	as, err := inAssetState(cmd, c)
	if err != nil {
		return nil, core.AssetRef{}, err
	}
	if f.name != "" || f.uri != "" {
		return as, core.AssetRef{Name: f.name, URI: f.uri}, nil
	}
	ta, err := c.TaskAssets(cmd.Context())
	if err != nil {
		return nil, core.AssetRef{}, taskStateError("look up the task's assets", err)
	}
	a, err := core.ShorthandAsset(ta.Assets, "pass --name or --uri")
	if err != nil {
		return nil, core.AssetRef{}, &ExitError{Code: exitInvalid, Err: err}
	}
	return as, core.AssetRef{Name: a.Name}, nil
}

// inAssetState returns c's asset state, wrapped by the worker-side backend
// when WEIR_STATE_BACKEND is set; backend warnings go to stderr.
func inAssetState(cmd *cobra.Command, c *execclient.Client) (operator.AssetState, error) {
	b, err := stateref.FromEnv()
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	if b == nil {
		return c, nil
	}
	return stateref.NewAssetState(c, b.Store, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))), nil
}

// AssetStateCmd is the in-task asset state CLI: like `weir task-state`, it
// runs inside a task and reaches the Execution API with the try's token.
func AssetStateCmd() *cobra.Command {
	var f assetStateTarget
	cmd := &cobra.Command{
		Use:   "asset-state",
		Short: "Read and write the state of an asset this task declares, from inside a running task",
		Long: `Asset state is a key/value store of JSON values scoped to one asset, independent of runs and
without retention: a watermark or cursor that the next run reads. A task reaches the state of
the concrete assets it declares as inlets or outlets; name the asset with --name or --uri, or
leave both out when the task declares exactly one. Reads WEIR_API_URL, WEIR_TASK_TOKEN (or
WEIR_TASK_TOKEN_FILE) and WEIR_TI_ID, which the worker sets for every task. When the worker
has a [workers] state_backend it also sets WEIR_STATE_BACKEND: values then go to that object
store (under the asset's name) and only a reference to the API.

Exit codes: 0 success; 1 get found no key and no --default was given; 2 bad input (not
JSON, null, NaN or Infinity, a bad key, a value over [state_store] max_value_bytes, or no
--name/--uri while the task does not declare exactly one asset); 3 the API refused the
request (the task does not declare the asset, the asset is unknown or inactive, the try is
no longer running) or could not be reached. Messages go to stderr.`,
	}
	cmd.PersistentFlags().StringVar(&f.name, "name", "", "the asset's name")
	cmd.PersistentFlags().StringVar(&f.uri, "uri", "", "the asset's uri")
	var def string
	get := &cobra.Command{
		Use:     "get KEY",
		Short:   "Print KEY's JSON value (or --default; exit 1 when absent without one)",
		Example: "  since=$(weir asset-state --name orders get watermark --default 0)",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fallback, err := defaultValue(cmd, def)
			if err != nil {
				return err
			}
			c, ref, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			v, err := c.AssetStateGet(cmd.Context(), ref, args[0])
			switch {
			case execclient.IsUnknownAsset(err):
				return taskStateError("get "+args[0], err)
			case errors.Is(err, core.ErrNotFound) && fallback != nil:
				v = fallback
			case errors.Is(err, core.ErrNotFound):
				return &ExitError{Code: exitAbsent, Err: fmt.Errorf("no asset state key %q for asset %s (pass --default to get a value instead)", args[0], ref)}
			case err != nil:
				return taskStateError("get "+args[0], err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(v))
			return nil
		},
	}
	get.Flags().StringVar(&def, "default", "", "JSON value printed when KEY is absent")
	set := &cobra.Command{
		Use:   "set KEY JSON",
		Short: "Store a JSON value under KEY (any JSON but null; no retention)",
		Example: `  weir asset-state set watermark 42
  weir asset-state --uri s3://lake/orders set cursor '{"id": "c-9"}'`,
		Args: args(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := statevalue.ParseValue([]byte(args[1]))
			if err != nil {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("value for %q: %w", args[0], err)}
			}
			c, ref, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			if err := c.AssetStateSet(cmd.Context(), ref, args[0], v); err != nil {
				return taskStateError("set "+args[0], err)
			}
			return nil
		},
	}
	del := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete KEY (nothing happens when it is absent)",
		Args:  args(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ref, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			if err := c.AssetStateDelete(cmd.Context(), ref, args[0]); err != nil {
				return taskStateError("delete "+args[0], err)
			}
			return nil
		},
	}
	clearCmd := &cobra.Command{
		Use:   "clear",
		Short: "Delete every key of the asset",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ref, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			if err := c.AssetStateClear(cmd.Context(), ref); err != nil {
				return taskStateError("clear", err)
			}
			return nil
		},
	}
	cmd.AddCommand(get, set, del, clearCmd)
	return cmd
}
