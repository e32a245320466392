package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// closeHandled closes the open stream of each streaming operator of g
// (core.Task.HandlesStream) whose instance in tis is terminal — it failed
// with no retry left, was marked or skipped — so that its trigger stops:
// the trigger's next append is refused, and the trigger, no longer in
// use, is deleted (docs/streaming.md#streaming-operators). A handler
// that succeeded read its stream to the close already.
func (s *Scheduler) closeHandled(ctx context.Context, run *core.DagRun, g *graph, tis []core.TaskInstance) error {
	for _, t := range g.order {
		if !t.HandlesStream() || !terminal(tis, t.TaskID) {
			continue
		}
		st, err := s.Store.StreamGet(ctx, core.TaskStreamID(run.ID, t.TaskID))
		if errors.Is(err, core.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read the stream of task %q: %w", t.TaskID, err)
		}
		if !st.Closed {
			if _, err := s.closeAbandoned(ctx, st, t.TaskID, tis); err != nil {
				return err
			}
		}
	}
	return nil
}

// terminal reports whether the unmapped instance of taskID in tis is in a
// terminal state.
func terminal(tis []core.TaskInstance, taskID string) bool {
	for i := range tis {
		if tis[i].TaskID == taskID && tis[i].MapIndex == core.NoMapIndex {
			return tis[i].State.Terminal()
		}
	}
	return false
}
