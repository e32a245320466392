package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// poolsCmd manages pools, as `airflow pools`.
func (a *app) poolsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "pools", Short: "Manage pools, which bound how many task instances run at once"}
	var pf pageFlags
	var out output
	list := &cobra.Command{
		Use:   "list",
		Short: "List pools by name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(b backend) error {
				pools, total, err := b.PoolList(cmd.Context(), &store.PoolListParams{WithOccupancy: true, Page: pg})
				pools, err = shownPage(cmd, &pf, pools, total, err)
				if err != nil {
					return err
				}
				rows := make([][]string, len(pools))
				for i, p := range pools {
					rows[i] = []string{p.Name, strconv.Itoa(p.Slots), orDash(p.Description)}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(pools), []string{"POOL", "SLOTS", "DESCRIPTION"}, rows)
			})
		},
	}
	pf.add(list, "pools", 100)
	out.add(list)
	set := &cobra.Command{
		Use:     "set NAME SLOTS [DESCRIPTION]",
		Short:   "Create a pool or change its slots (and description)",
		Example: "  weir pools set warehouse 4 'connections the warehouse allows'",
		Args:    cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			slots, err := strconv.Atoi(args[1])
			if err != nil {
				return fmt.Errorf("SLOTS %q is not a whole number", args[1])
			}
			ch := service.PoolChange{Name: args[0], Slots: &slots, Mode: service.PoolUpsert}
			if len(args) == 3 {
				ch.Description = &args[2]
			}
			return a.withBackend(cmd, func(b backend) error {
				p, err := b.PoolSave(cmd.Context(), ch)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pool %s has %d slots\n", p.Name, p.Slots)
				return nil
			})
		},
	}
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a pool (default_pool cannot be deleted)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				if err := b.PoolDelete(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pool %s deleted\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(list, set, del)
	return cmd
}
