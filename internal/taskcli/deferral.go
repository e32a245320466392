package taskcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// DeferCmd is the in-task deferral: a shell task (any language) records
// the trigger it waits on with `weir defer`, then exits with code 100; the
// worker reports the deferral and frees its slot, and the task's command
// runs again when the trigger fires, with WEIR_RESUME_METHOD and
// WEIR_TRIGGER_EVENT set. Triggers are checked against types.
func DeferCmd(types *trigger.Registry) *cobra.Command {
	var resume, nextKwargs string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "defer TRIGGER_TYPE [KWARGS_JSON]",
		Short: "Defer this task on a trigger: record it, then exit with code " + strconv.Itoa(operator.DeferExitCode),
		Long: "Records the deferral of the running shell task's try in the file the worker names ($" + operator.EnvDeferFile +
			"). The task then exits with code " + strconv.Itoa(operator.DeferExitCode) + ": the worker defers the try and frees " +
			"its slot, a triggerer waits on the trigger, and the task's command runs again when it fires, with $" +
			operator.EnvResumeMethod + " (the --resume method), $" + operator.EnvTriggerEvent + " (the event, JSON) and $" +
			operator.EnvNextKwargs + " set. An unknown trigger type or bad kwargs exit 2 and record nothing.",
		Example: "  weir defer timedelta '{\"delta\": \"30s\"}' --resume check --timeout 1h && exit " + strconv.Itoa(operator.DeferExitCode) +
			"\n  weir defer file '{\"path\": \"/data/in/*.csv\"}' && exit " + strconv.Itoa(operator.DeferExitCode),
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := os.Getenv(operator.EnvDeferFile)
			if path == "" {
				return &ExitError{Code: 2, Err: fmt.Errorf("$%s is not set: weir defer runs inside a shell task", operator.EnvDeferFile)}
			}
			d := core.Deferral{Trigger: core.TriggerSpec{Type: args[0]}, NextMethod: resume, Timeout: core.Duration(timeout)}
			if len(args) == 2 {
				d.Trigger.Kwargs = json.RawMessage(args[1])
				if !json.Valid(d.Trigger.Kwargs) {
					return &ExitError{Code: 2, Err: fmt.Errorf("kwargs are not JSON: %s", args[1])}
				}
			}
			if nextKwargs != "" {
				d.NextKwargs = json.RawMessage(nextKwargs)
			}
			if err := types.CheckDeferral(d); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			b, err := json.Marshal(d)
			if err != nil {
				return err
			}
			tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
			if err := os.WriteFile(tmp, b, 0o600); err != nil { //nolint:gosec // the worker names the file, in its private directory
				return fmt.Errorf("record the deferral: %w", err)
			}
			if err := os.Rename(tmp, path); err != nil { //nolint:gosec // as above
				return fmt.Errorf("record the deferral: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "deferral on a %s trigger recorded: exit with code %d to defer\n", d.Trigger.Type, operator.DeferExitCode)
			return nil
		},
	}
	cmd.Flags().StringVar(&resume, "resume", "", "resume method: the value of $"+operator.EnvResumeMethod+" when the command runs again")
	cmd.Flags().StringVar(&nextKwargs, "next-kwargs", "", "JSON object passed to the resumed command as $"+operator.EnvNextKwargs)
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "fail the try (retries follow) if the trigger has not fired by then (0 = never)")
	return cmd
}
