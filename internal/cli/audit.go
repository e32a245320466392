package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// auditCmd is `weir audit list`: the audit log, as GET /api/v2/eventLogs
// serves it.
func (a *app) auditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log of administrative changes"}
	var (
		pf  pageFlags
		p   store.AuditLogListParams
		out output
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List audit log entries, newest first",
		Long: `Lists who changed what, newest first: pauses, triggers, clears, marks, state edits, pool,
connection and user changes, from the REST API and the CLI alike. --before-id pages back from an
entry by its id without counting the entries before it (a keyset cursor).`,
		Example: "  weir audit list --event dag.pause\n  weir audit list --before-id 1200 --limit 100",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			p.Page = pg
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				entries, err := listPage(cmd, &pf, &p, st.AuditLogList, st.AuditLogCount)
				if err != nil {
					return err
				}
				logs := make([]api.EventLog, len(entries))
				rows := make([][]string, len(entries))
				for i, e := range entries {
					logs[i] = api.EventLogOf(e)
					rows[i] = []string{strconv.FormatInt(e.ID, 10), fmtTime(&e.When), e.User, e.Action, orDash(e.Target), orDash(e.Detail)}
				}
				return out.print(cmd.OutOrStdout(), logs, []string{"ID", "WHEN", "OWNER", "EVENT", "TARGET", "DETAIL"}, rows)
			})
		},
	}
	list.Flags().StringVar(&p.Action, "event", "", "only entries of this action, e.g. dag.pause")
	list.Flags().StringVar(&p.User, "owner", "", "only entries by this user (the CLI records cli:<os user>)")
	list.Flags().StringVar(&p.Target, "target", "", "only entries about this target, e.g. a dag_id")
	list.Flags().Int64Var(&p.BeforeID, "before-id", 0, "only entries older than this id (keyset cursor)")
	out.add(list)
	pf.add(list, "entries", 50)
	cmd.AddCommand(list)
	return cmd
}
