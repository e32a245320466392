package taskcli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
)

// AssetStateCmd is `weir asset-state`: the state of an asset the task
// declares, named with --name or --uri, or the only one it declares.
// backends are the program's custom state backends (weir.WithStateBackend).
func AssetStateCmd(backends stateref.Registry) *cobra.Command {
	var name, uri string
	return stateCmd(stateCLI{
		backends: backends,
		use:      "asset-state",
		short:    "Read and write the state of an asset this task declares, from inside a running task",
		long: `Asset state is a key/value store of JSON values scoped to one asset, independent of runs and
without retention: a watermark or cursor that the next run reads. A task reaches the state of
the concrete assets it declares as inlets or outlets; name the asset with --name or --uri, or
leave both out when the task declares exactly one. Reads WEIR_API_URL, WEIR_TASK_TOKEN (or
WEIR_TASK_TOKEN_FILE) and WEIR_TI_ID, which the worker sets for every task. When the worker
has a state backend ([workers] state_backend, or a custom [state_store] backend) it also sets
WEIR_STATE_BACKEND: values then go to that backend (under the asset's name) and only a
reference to the API.

Exit codes: 0 success; 1 get found no key and no --default was given; 2 bad input (not
JSON, null, NaN or Infinity, a bad key, a value over [state_store] max_value_bytes, or no
--name/--uri while the task does not declare exactly one asset); 3 the API refused the
request (the task does not declare the asset, the asset is unknown or inactive, the try is
no longer running) or could not be reached. Messages go to stderr.`,
		getExample: "  since=$(weir asset-state --name orders get watermark --default 0)",
		setShort:   "Store a JSON value under KEY (any JSON but null; no retention)",
		setExample: `  weir asset-state set watermark 42
  weir asset-state --uri s3://lake/orders set cursor '{"id": "c-9"}'`,
		clearShort: "Delete every key of the asset but its watchers' (watcher/..., read-only to tasks)",
		flags: func(cmd *cobra.Command) {
			cmd.PersistentFlags().StringVar(&name, "name", "", "the asset's name")
			cmd.PersistentFlags().StringVar(&uri, "uri", "", "the asset's uri")
		},
		// Without --name or --uri the scope is the one concrete asset the
		// task declares (exit 2 when there are none or several).
		scope: func(cmd *cobra.Command, st operator.State) (core.StateScope, error) {
			switch {
			case name != "" && uri != "":
				return core.StateScope{}, &ExitError{Code: exitInvalid, Err: errors.New("pass --name or --uri, not both")}
			case name != "":
				return core.AssetScopeByName(name), nil
			case uri != "":
				return core.AssetScopeByURI(uri), nil
			}
			declared, err := st.DeclaredAssets(cmd.Context())
			if err != nil {
				return core.StateScope{}, taskStateError("look up the task's assets", err)
			}
			a, err := core.ShorthandAsset(declared, "pass --name or --uri")
			if err != nil {
				return core.StateScope{}, &ExitError{Code: exitInvalid, Err: err}
			}
			return core.AssetScopeByName(a.Name), nil
		},
		absent: func(scope core.StateScope) string { return scope.Describe() },
	})
}
