package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/store"
)

// dagWarningsCmd is `weir dags list-warnings`: what GET /api/v2/dagWarnings
// lists, problems in DAGs that still load.
func (a *app) dagWarningsCmd() *cobra.Command {
	var (
		pf          pageFlags
		format      output
		dagID, kind string
	)
	cmd := &cobra.Command{
		Use:   "list-warnings",
		Short: "List warnings about DAGs that load (such as a bash_command printing params unquoted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(b backend) error {
				p := &store.DagWarningListParams{DagID: dagID, WarningType: kind, Page: pg}
				ws, total, err := b.DagWarningList(cmd.Context(), p)
				ws, err = shownPage(cmd, &pf, ws, total, err)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if !format.isTable() {
					rows := make([][]string, len(ws))
					for i, w := range ws {
						rows[i] = []string{w.DagID, w.WarningType, w.Message}
					}
					return format.print(out, nonNilList(ws), nil, rows)
				}
				if len(ws) == 0 {
					fmt.Fprintln(out, "no dag warnings")
				}
				for _, w := range ws {
					fmt.Fprintf(out, "%s (%s):\n  %s\n", w.DagID, w.WarningType, strings.ReplaceAll(w.Message, "\n", "\n  "))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&dagID, "dag-id", "", "only this DAG's warnings")
	cmd.Flags().StringVar(&kind, "warning-type", "", `only warnings of this type, such as "unquoted trigger data"`)
	pf.add(cmd, "warnings", 50)
	format.add(cmd)
	return cmd
}
