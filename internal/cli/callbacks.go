package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// runCallbacksCmd lists a run's fired callbacks (docs/emission.md#callbacks).
func (a *app) runCallbacksCmd() *cobra.Command {
	var taskID string
	var pf pageFlags
	var out output
	cmd := &cobra.Command{
		Use:   "callbacks DAG_ID RUN_ID",
		Short: "List the callbacks a run's state changes fired, with their state, attempts and error",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return listThrough(a, cmd, &pf, func(ctx context.Context, b backend, pg store.Page) ([]core.Callback, int, error) {
				return b.CallbackList(ctx, args[0], args[1], &store.CallbackListParams{TaskID: taskID, Page: pg})
			}, func(list []core.Callback) error {
				rows := make([][]string, len(list))
				for i, cb := range list {
					task, try := "-", "-"
					if cb.TaskID != "" {
						task, try = cb.TaskID, strconv.Itoa(cb.TryNumber)
						if cb.MapIndex >= 0 {
							task += "[" + strconv.Itoa(cb.MapIndex) + "]"
						}
					}
					rows[i] = []string{strconv.FormatInt(cb.ID, 10), task, try, string(cb.Event), string(cb.State),
						strconv.Itoa(cb.Attempts), orDash(cb.WorkerID), fmtTime(cb.EndedAt), orDash(cb.Error)}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(list),
					[]string{"ID", "TASK", "TRY", "EVENT", "STATE", "ATTEMPTS", "WORKER", "END", "ERROR"}, rows)
			})
		},
	}
	cmd.Flags().StringVar(&taskID, "task", "", "only this task's callbacks")
	pf.add(cmd, "callbacks", 50)
	out.add(cmd)
	return cmd
}

// runCallbackLogsCmd prints one attempt's log of a callback; with --follow
// it keeps printing while the attempt runs.
func (a *app) runCallbackLogsCmd() *cobra.Command {
	var attempt int
	var follow bool
	cmd := &cobra.Command{
		Use:   "callback-logs CALLBACK_ID",
		Short: "Print a callback's log (default: its latest attempt); --follow tails it while it runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("CALLBACK_ID must be a callback's id (weir runs callbacks lists them), got %q", args[0])
			}
			if attempt < 0 {
				return fmt.Errorf("--attempt must be 1 or more (0 = the latest), got %d", attempt)
			}
			return a.withBackend(cmd, func(b backend) error {
				key, cb, err := b.CallbackLogKey(cmd.Context(), id, attempt)
				if err != nil {
					return err
				}
				if follow && cb == nil {
					return fmt.Errorf("--follow needs GET .../callbacks/%d of the api-server, which answered not found "+
						"(an api-server older than this weir, or no such callback)", id)
				}
				var active func(context.Context) (bool, error)
				if follow && key.TryNumber == cb.Attempts {
					active = func(ctx context.Context) (bool, error) {
						_, cb, err := b.CallbackLogKey(ctx, id, key.TryNumber)
						return err == nil && tasklog.AttemptWriting(cb, key), err
					}
				}
				return tailLog(cmd, b, key, active)
			})
		},
	}
	cmd.Flags().IntVar(&attempt, "attempt", 0, "attempt number (default the latest)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the attempt ends")
	return cmd
}
