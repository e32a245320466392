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

// Exit codes of `weir task-state`, for scripts.
const (
	exitAbsent  = 1 // get: the key is absent and no --default was given
	exitInvalid = 2 // bad input: not JSON, null, NaN, a bad retention or key, a value over the limit
	exitFailed  = 3 // the API refused the request or could not be reached
)

// taskStateError maps an Execution API error to the documented exit codes.
func taskStateError(what string, err error) error {
	if errors.Is(err, core.ErrInvalid) || errors.Is(err, core.ErrTooLarge) {
		return &ExitError{Code: exitInvalid, Err: fmt.Errorf("%s: %w", what, err)}
	}
	return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: %w", what, err)}
}

// args checks the argument count with exit code 2 on a mismatch.
func args(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) != n {
			return &ExitError{Code: exitInvalid, Err: fmt.Errorf("%s takes %d argument(s), got %d (see --help)", cmd.CommandPath(), n, len(a))}
		}
		return nil
	}
}

// TaskStateCmd is the in-task task state CLI: it runs inside a task (any
// language) and reaches the Execution API with the try's token from the
// environment, like `weir xcom`.
func TaskStateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task-state",
		Short: "Read and write this task instance's task state from inside a running task",
		Long: `Task state is a key/value store of JSON values scoped to one task instance (dag, run,
task, map index) and shared by all its tries: a retry reads what an earlier try wrote.
Reads WEIR_API_URL, WEIR_TASK_TOKEN (or WEIR_TASK_TOKEN_FILE) and WEIR_TI_ID, which the
worker sets for every task. When the worker has a [workers] state_backend it also sets
WEIR_STATE_BACKEND: values then go to that object store and only a reference to the API.

Exit codes: 0 success; 1 get found no key and no --default was given; 2 bad input (not
JSON, null, NaN or Infinity, a bad retention or key, a value over [state_store]
max_value_bytes); 3 the API refused the request (e.g. the try is no longer running) or
could not be reached. Messages go to stderr.`,
	}
	var def string
	get := &cobra.Command{
		Use:     "get KEY",
		Short:   "Print KEY's JSON value (or --default; exit 1 when absent without one)",
		Example: "  last=$(weir task-state get last_page --default 0)",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fallback, err := defaultValue(cmd, def)
			if err != nil {
				return err
			}
			c, err := inTaskState(cmd)
			if err != nil {
				return err
			}
			v, err := c.TaskStateGet(cmd.Context(), args[0])
			switch {
			case errors.Is(err, core.ErrNotFound) && fallback != nil:
				v = fallback
			case errors.Is(err, core.ErrNotFound):
				return &ExitError{Code: exitAbsent, Err: fmt.Errorf("no task state key %q for this task instance (pass --default to get a value instead)", args[0])}
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
		Use:   "set KEY JSON",
		Short: "Store a JSON value under KEY (any JSON but null)",
		Example: `  weir task-state set last_page 7
  weir task-state set job '{"id": "j-42"}' --retention never
  weir task-state set note '"text needs JSON quotes"' --retention 6h`,
		Args: args(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := statevalue.ParseValue([]byte(args[1]))
			if err != nil {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("value for %q: %w", args[0], err)}
			}
			r, err := statevalue.ParseRetention(retention)
			if err != nil {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("--retention: %w", err)}
			}
			c, err := inTaskState(cmd)
			if err != nil {
				return err
			}
			if err := c.TaskStateSet(cmd.Context(), args[0], v, r.String()); err != nil {
				return taskStateError("set "+args[0], err)
			}
			return nil
		},
	}
	set.Flags().StringVar(&retention, "retention", "", `when the key expires: a duration after now ("6h", "7d") or "never" (default [state_store] default_retention_days)`)
	del := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete KEY (nothing happens when it is absent)",
		Args:  args(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := inTaskState(cmd)
			if err != nil {
				return err
			}
			if err := c.TaskStateDelete(cmd.Context(), args[0]); err != nil {
				return taskStateError("delete "+args[0], err)
			}
			return nil
		},
	}
	var all bool
	clearCmd := &cobra.Command{
		Use:   "clear",
		Short: "Delete every key of this task instance (of every map index with --all-map-indices)",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := inTaskState(cmd)
			if err != nil {
				return err
			}
			if err := c.TaskStateClear(cmd.Context(), all); err != nil {
				return taskStateError("clear", err)
			}
			return nil
		},
	}
	clearCmd.Flags().BoolVar(&all, "all-map-indices", false, "clear every map index of this task in this run")
	cmd.AddCommand(get, set, del, clearCmd)
	return cmd
}

// inTaskState returns the running task's task state: its Execution API
// client from the environment, wrapped by the worker-side backend when
// WEIR_STATE_BACKEND is set (SPEC BE-2). Backend warnings go to stderr.
func inTaskState(cmd *cobra.Command) (operator.TaskState, error) {
	c, err := execclient.ClientFromEnv()
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	b, err := stateref.FromEnv()
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	if b == nil {
		return c, nil
	}
	ts, err := stateref.NewTaskState(c, b.Store, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	return ts, nil
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
