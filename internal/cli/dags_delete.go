package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/store"
)

// dagsDeleteCmd is `weir dags delete DAG_ID`, as Airflow's: it deletes a
// DAG's metadata and history after asking, unless --yes.
func (a *app) dagsDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete DAG_ID",
		Short: "Delete a DAG's metadata and history (runs, task instances, XCom, task state, backfills); asks first",
		Long: "Deletes everything the database holds of the DAG: its row, versions, runs, task instances and their\n" +
			"tries, XCom, task state and backfills (asset events it emitted and the audit log stay). It refuses while\n" +
			"a task instance of the DAG is queued, running or deferred. As in Airflow, the DAG file is not touched: if\n" +
			"it is still in the DAGs folder, the DAG comes back (with no history) at the DAG processor's next scan.",
		Example: "  weir dags delete etl\n  weir dags delete etl --yes",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dagID := args[0]
			return a.withBackend(cmd, func(b backend) error {
				out := cmd.OutOrStdout()
				d, err := b.DagGet(cmd.Context(), dagID)
				if err != nil {
					return err
				}
				if !yes {
					_, n, err := b.DagRunList(cmd.Context(), &store.DagRunListParams{DagID: dagID, Page: store.Page{Limit: 1}})
					if err != nil {
						return err
					}
					q := fmt.Sprintf("Delete dag %s and its history (%d runs)? This cannot be undone.", dagID, n)
					if !confirm(cmd.InOrStdin(), out, q) {
						return fmt.Errorf("nothing deleted (answer y, or pass --yes to delete without asking)")
					}
				}
				n, err := b.DagDelete(cmd.Context(), dagID)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "deleted dag %s and %d runs\n", dagID, n)
				switch _, err := os.Stat(d.FileLoc); {
				case d.FileLoc == "" || strings.HasPrefix(d.FileLoc, "go:"):
				case err == nil:
					fmt.Fprintf(cmd.ErrOrStderr(), "its file %s is not deleted: while it stays in the DAGs folder the DAG comes back at the next scan\n", d.FileLoc)
				default: // gone, or on the scheduler's machine rather than this one
					fmt.Fprintf(cmd.ErrOrStderr(), "its file %s is not on this machine: if a scheduler still reads it, the DAG comes back at its next scan\n", d.FileLoc)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking for confirmation")
	return cmd
}
