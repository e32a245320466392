package cli

import (
	"github.com/weirflow/weir/internal/taskcli"
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

// streamCmd is `weir stream`: the in-task push and close, and show, a
// stream's head from anywhere (as GET /api/v2/streams/{id}).
func (a *app) streamCmd() *cobra.Command {
	cmd := taskcli.StreamCmd()
	for _, c := range cmd.Commands() {
		localOnly(c)
	}
	var out output
	show := &cobra.Command{
		Use:   "show STREAM_ID",
		Short: "Show a stream's head: items so far, pending of max_pending, open or closed (and why it failed)",
		Long: "A stream's id is run-<dag run id>:<producer task> for a producer task's (weir tasks expansion and the " +
			"task-instance page name it), or its trigger run's.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				st, err := b.Stream(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				state := "open"
				if st.Closed {
					state = "closed"
				}
				row := []string{st.ID, strconv.FormatInt(st.NextIndex, 10), strconv.Itoa(st.Pending), strconv.Itoa(st.MaxPending), state, orDash(st.Error)}
				return out.print(cmd.OutOrStdout(), st, []string{"STREAM", "ITEMS", "PENDING", "MAX_PENDING", "STATE", "ERROR"}, [][]string{row})
			})
		},
	}
	out.add(show)
	cmd.AddCommand(show)
	return cmd
}
