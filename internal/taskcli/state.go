package taskcli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/statevalue"
)

// Exit codes of `weir task-state` and `weir asset-state`, for scripts.
const (
	exitAbsent  = 1 // get: the key is absent and no --default was given
	exitInvalid = 2 // bad input: not JSON, null, NaN, a bad retention or key, a value over the limit
	exitFailed  = 3 // the API refused the request or could not be reached
)

// taskStateError maps an Execution API error to the documented exit codes.
func taskStateError(what string, err error) error {
	// A client newer than the api-server is refused with 400 too, but the
	// input was fine: the API refused it (3), as any other refusal.
	if (errors.Is(err, core.ErrInvalid) || errors.Is(err, core.ErrTooLarge)) && !execclient.IsVersionMismatch(err) {
		return &ExitError{Code: exitInvalid, Err: fmt.Errorf("%s: %w", what, apiProblem(err))}
	}
	return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: %w", what, apiProblem(err))}
}

// apiProblem turns the Execution API's refusal of a request (a 4xx answer)
// into the problem's detail alone: the API's words name the problem, and
// the request's method, path and status would only repeat it (`get k: no
// asset "other"`). Other errors (no answer, 5xx) are left as they are.
func apiProblem(err error) error {
	var e *execclient.Error
	if errors.As(err, &e) && e.Status >= 400 && e.Status < 500 && e.Problem.Detail != "" {
		return &problemError{e}
	}
	return err
}

// problemError says an Execution API error's detail and still matches it
// (errors.As, errors.Is against the core sentinels).
type problemError struct{ e *execclient.Error }

func (p *problemError) Error() string { return p.e.Problem.Detail }
func (p *problemError) Unwrap() error { return p.e }

// args checks the argument count with exit code 2 on a mismatch.
func args(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) != n {
			return &ExitError{Code: exitInvalid, Err: fmt.Errorf("%s takes %d argument(s), got %d (see --help)", cmd.CommandPath(), n, len(a))}
		}
		return nil
	}
}

// stateCLI is what differs between the in-task state commands (one per
// kind); stateCmd builds the same get, set, delete and clear for each.
type stateCLI struct {
	use, short, long string
	getExample       string
	setShort         string
	setExample       string
	clearShort       string
	// retention and allMapIndices add --retention to set and
	// --all-map-indices to clear (task state).
	retention, allMapIndices bool
	// flags adds the command's own flags; scope returns the scope they name.
	flags func(cmd *cobra.Command)
	scope func(cmd *cobra.Command, st operator.State) (core.StateScope, error)
	// absent describes the scope in the message of an absent key.
	absent func(scope core.StateScope) string
	// backends are the program's custom state backends, which
	// WEIR_STATE_BACKEND may name.
	backends stateref.Registry
}

// stateCmd builds a kind's in-task command: it runs inside a task (any
// language) and reaches the Execution API with the try's token from the
// environment, through the worker-side backend when WEIR_STATE_BACKEND is
// set (docs/state-backends.md).
func stateCmd(k stateCLI) *cobra.Command {
	cmd := &cobra.Command{Use: k.use, Short: k.short, Long: k.long}
	k.flags(cmd)
	// open returns the state access and the scope of a subcommand.
	open := func(cmd *cobra.Command) (operator.State, core.StateScope, error) {
		st, err := inState(k.backends)
		if err != nil {
			return nil, core.StateScope{}, err
		}
		scope, err := k.scope(cmd, st)
		return st, scope, err
	}
	var def string
	get := &cobra.Command{
		Use:     "get KEY",
		Short:   "Print KEY's JSON value (or --default; exit 1 when absent without one)",
		Example: k.getExample,
		Args:    args(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fallback, err := defaultValue(cmd, def)
			if err != nil {
				return err
			}
			st, scope, err := open(cmd)
			if err != nil {
				return err
			}
			v, err := st.StateGet(cmd.Context(), scope, args[0])
			switch {
			case execclient.IsUnknownAsset(err):
				return taskStateError("get "+args[0], err)
			case errors.Is(err, core.ErrNotFound) && fallback != nil:
				v = fallback
			case errors.Is(err, core.ErrNotFound):
				return &ExitError{Code: exitAbsent, Err: fmt.Errorf("no %s state key %q for %s (pass --default to get a value instead)",
					scope.Kind, args[0], k.absent(scope))}
			case err != nil:
				return taskStateError("get "+args[0], err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(v))
			return nil
		},
	}
	get.Flags().StringVar(&def, "default", "", "JSON value printed when KEY is absent")
	var retention string
	set := &cobra.Command{
		Use:     "set KEY JSON",
		Short:   k.setShort,
		Example: k.setExample,
		Args:    args(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := statevalue.ParseValue([]byte(args[1]))
			if err != nil {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("value for %q: %w", args[0], err)}
			}
			r, err := statevalue.ParseRetention(retention)
			if err != nil {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("--retention: %w", err)}
			}
			st, scope, err := open(cmd)
			if err != nil {
				return err
			}
			if err := st.StateSet(cmd.Context(), scope, args[0], v, r.String()); err != nil {
				return taskStateError("set "+args[0], err)
			}
			return nil
		},
	}
	if k.retention {
		set.Flags().StringVar(&retention, "retention", "", `when the key expires: a duration after now ("6h", "7d") or "never" (default [state_store] default_retention_days)`)
	}
	del := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete KEY (nothing happens when it is absent)",
		Args:  args(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, scope, err := open(cmd)
			if err != nil {
				return err
			}
			if err := st.StateDelete(cmd.Context(), scope, args[0]); err != nil {
				return taskStateError("delete "+args[0], err)
			}
			return nil
		},
	}
	var all bool
	clearCmd := &cobra.Command{
		Use:   "clear",
		Short: k.clearShort,
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, scope, err := open(cmd)
			if err != nil {
				return err
			}
			if err := st.StateClear(cmd.Context(), scope, all); err != nil {
				return taskStateError("clear", err)
			}
			return nil
		},
	}
	if k.allMapIndices {
		clearCmd.Flags().BoolVar(&all, "all-map-indices", false, "clear every map index of this task in this run")
	}
	cmd.AddCommand(get, set, del, clearCmd)
	return cmd
}

// inState returns the running task's state: its Execution API client from
// the environment, wrapped by the worker-side backend when
// WEIR_STATE_BACKEND is set (a URL, or a name among backends).
func inState(backends stateref.Registry) (operator.State, error) {
	c, err := execclient.ClientFromEnv()
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	b, err := stateref.FromEnv(backends)
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	if b == nil {
		return c, nil
	}
	st, err := stateref.New(c, b.Store)
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	return st, nil
}

// defaultValue parses a get's --default (nil when it was not given); a bad
// value exits 2 before the API is asked.
func defaultValue(cmd *cobra.Command, def string) ([]byte, error) {
	if !cmd.Flags().Changed("default") {
		return nil, nil
	}
	v, err := statevalue.ParseValue([]byte(def))
	if err != nil {
		return nil, &ExitError{Code: exitInvalid, Err: fmt.Errorf("--default: %w", err)}
	}
	return v, nil
}
