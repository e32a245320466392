package cli

import (
	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/service"
)

// runsClearCmd is `weir runs clear DAG_ID RUN_ID`: every task instance of
// one run (or only its failed ones) runs again, as the REST API's
// dagRuns/{id}/clear. It lists what it would clear and asks, unless --yes.
func (a *app) runsClearCmd() *cobra.Command {
	var (
		p   service.ClearParams
		yes bool
	)
	cmd := &cobra.Command{
		Use:   "clear DAG_ID RUN_ID",
		Short: "Clear a run's task instances so they run again (a new try; task state is deleted unless --keep-task-state)",
		Long: "Lists the run's task instances the clear resets and asks for confirmation (--yes skips the question;\n" +
			"--dry-run only lists). Each gets a new try in state none, its XCom is deleted, and so is its task state\n" +
			"unless --keep-task-state; a finished run goes back to queued.",
		Example: "  weir runs clear etl manual__2026-01-01T00:00:00Z --only-failed --yes",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.DagID, p.RunID = args[0], args[1]
			return a.withBackend(cmd, func(b backend) error {
				return confirmAndClear(cmd, b, p, yes, " of run "+p.RunID)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&p.OnlyFailed, "only-failed", false, "only failed and upstream_failed instances")
	f.BoolVar(&p.KeepTaskState, "keep-task-state", false, "keep the instances' task state (by default a clear deletes it)")
	f.BoolVar(&p.DryRun, "dry-run", false, "list what would be cleared; change nothing")
	f.BoolVarP(&yes, "yes", "y", false, "clear without asking for confirmation")
	return cmd
}
