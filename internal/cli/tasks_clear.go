package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/service"
)

// tasksClearCmd clears task instances so the scheduler runs them again, as
// `airflow tasks clear` and the REST API's clearTaskInstances.
func (a *app) tasksClearCmd() *cobra.Command {
	var p service.ClearParams
	cmd := &cobra.Command{
		Use:   "clear DAG_ID",
		Short: "Clear task instances so they run again (a new try; task state is deleted unless --keep-task-state)",
		Example: "  weir tasks clear etl --run-id manual__2026-01-01T00:00:00Z --only-failed\n" +
			"  weir tasks clear etl -t load -t report --dry-run",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.DagID = args[0]
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				tis, err := svc.Clear(cmd.Context(), a.cliActor(), p)
				if err != nil {
					return err
				}
				verb := "cleared"
				if p.DryRun {
					verb = "would clear"
				}
				rows := make([][]string, len(tis))
				for i, ti := range tis {
					rows[i] = []string{ti.RunID, ti.TaskID, strconv.Itoa(ti.MapIndex), strconv.Itoa(ti.TryNumber), ti.State.String()}
				}
				if err := table(cmd.OutOrStdout(), []string{"RUN_ID", "TASK_ID", "MAP_INDEX", "TRY", "STATE"}, rows); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %d task instances\n", verb, len(tis))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.RunID, "run-id", "", "only this run (default: every run of the DAG)")
	f.StringArrayVarP(&p.TaskIDs, "task-id", "t", nil, "only this task (repeatable; default: every task)")
	f.BoolVar(&p.OnlyFailed, "only-failed", false, "only failed and upstream_failed instances")
	f.BoolVar(&p.KeepTaskState, "keep-task-state", false, "keep the instances' task state (by default a clear deletes it)")
	f.BoolVar(&p.DryRun, "dry-run", false, "list what would be cleared; change nothing")
	return cmd
}
