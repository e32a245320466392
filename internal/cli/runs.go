package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func (a *app) runsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "Inspect DAG runs"}
	var dagID, state string
	var pf pageFlags
	var out output
	list := &cobra.Command{
		Use:   "list",
		Short: "List DAG runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			p := &store.DagRunListParams{DagID: dagID, Page: pg}
			if state != "" {
				s := core.DagRunState(state)
				if !s.Valid() {
					return fmt.Errorf("--state %q: want queued, running, success or failed", state)
				}
				p.States = []core.DagRunState{s}
			}
			return a.withBackend(cmd, func(b backend) error {
				list, total, err := b.DagRunList(cmd.Context(), p)
				list, err = shownPage(cmd, &pf, list, total, err)
				if err != nil {
					return err
				}
				rows := make([][]string, len(list))
				for i, r := range list {
					part := "-"
					if r.PartitionKey != nil {
						part = *r.PartitionKey
					}
					rows[i] = []string{r.DagID, r.RunID, string(r.RunType), string(r.State), part, fmtTime(r.LogicalDate), fmtTime(r.StartDate), fmtTime(r.EndDate)}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(list), []string{"DAG_ID", "RUN_ID", "TYPE", "STATE", "PARTITION", "LOGICAL_DATE", "START", "END"}, rows)
			})
		},
	}
	list.Flags().StringVar(&dagID, "dag", "", "only runs of this DAG")
	list.Flags().StringVarP(&dagID, "dag-id", "d", "", "only runs of this DAG (Airflow's spelling of --dag)")
	list.Flags().StringVar(&state, "state", "", "only runs in this state (queued, running, success, failed)")
	pf.add(list, "runs", 50)
	out.add(list)
	cmd.AddCommand(list, a.runCallbacksCmd(), a.runCallbackLogsCmd())
	return cmd
}
