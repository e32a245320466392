package cli

import (
	"strconv"

	"github.com/spf13/cobra"
)

// tasksExpansionCmd shows where a lazily expanding task (iterate) stands
// in one run: items so far, instances so far, open or closed.
func (a *app) tasksExpansionCmd() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "expansion DAG_ID RUN_ID TASK_ID",
		Short: "Show a task mapped over a stream (iterate) as it expands: items and instances so far, open or closed",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				e, err := b.Expansion(cmd.Context(), args[0], args[1], args[2])
				if err != nil {
					return err
				}
				state := "closed"
				if e.Open {
					state = "open"
				}
				row := []string{e.TaskID, e.Iterate, strconv.FormatInt(e.Items, 10), strconv.Itoa(e.Instances), state, orDash(e.Error)}
				return out.print(cmd.OutOrStdout(), e, []string{"TASK", "ITERATE", "ITEMS", "INSTANCES", "EXPANSION", "ERROR"}, [][]string{row})
			})
		},
	}
	out.add(cmd)
	return cmd
}
