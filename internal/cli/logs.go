package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/tasklog"
)

// taskLogsCmd prints a try's log from where the api-servers keep logs
// ([logging] log_store: the log folder or the database), and with
// --follow keeps printing while the task runs.
func (a *app) taskLogsCmd() *cobra.Command {
	var try, mapIndex int
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs DAG_ID RUN_ID TASK_ID",
		Short: "Print a task try's log (default: the current try); --follow tails it while the task runs",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(cfg *config.Config, st *sqlstore.Store) error {
				ti, err := st.TaskInstanceGetByKey(cmd.Context(), args[0], args[1], args[2], mapIndex)
				if err != nil {
					return fmt.Errorf("task instance %s/%s/%s (map index %d): %w", args[0], args[1], args[2], mapIndex, err)
				}
				key := tasklog.KeyOf(ti)
				if try > 0 {
					if try > ti.TryNumber {
						return fmt.Errorf("--try %d: the task instance is at try %d", try, ti.TryNumber)
					}
					key.TryNumber = try
				}
				return tailLog(cmd, st, taskLogs(cfg, st), key, follow && key.TryNumber == ti.TryNumber)
			})
		},
	}
	cmd.Flags().IntVar(&try, "try", 0, "try number (default the current try)")
	cmd.Flags().IntVar(&mapIndex, "map-index", core.NoMapIndex, "map index of a mapped task")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the try finishes")
	return cmd
}

// tailLog copies the log to stdout; with follow it polls until the try is
// no longer queued or running and the log is drained.
func tailLog(cmd *cobra.Command, st store.Store, logs tasklog.Logs, key tasklog.Key, follow bool) error {
	ctx := cmd.Context()
	var offset int64
	for {
		data, next, err := logs.Read(ctx, key, offset)
		if err != nil && (!follow || !errors.Is(err, core.ErrNotFound)) {
			return err
		}
		if len(data) > 0 {
			if _, err := cmd.OutOrStdout().Write(data); err != nil {
				return err
			}
			offset = next
			continue // drain before checking the state
		}
		if !follow {
			return nil
		}
		active, err := tryActive(ctx, st, key)
		if err != nil || !active {
			// One more read: the worker flushes before reporting the state.
			if data, _, rerr := logs.Read(ctx, key, offset); rerr == nil {
				_, _ = cmd.OutOrStdout().Write(data)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// tryActive reports whether key's try is still waiting or running.
func tryActive(ctx context.Context, st store.Store, key tasklog.Key) (bool, error) {
	ti, err := st.TaskInstanceGetByKey(ctx, key.DagID, key.RunID, key.TaskID, key.MapIndex)
	if err != nil {
		return false, err
	}
	if ti.TryNumber != key.TryNumber {
		return false, nil
	}
	switch ti.State {
	case core.TINone, core.TIScheduled, core.TIQueued, core.TIRunning:
		return true, nil
	default: // finished, waiting to retry, or deferred: no more output from this try
		return false, nil
	}
}
