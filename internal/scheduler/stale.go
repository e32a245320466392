package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// checkStale handles dead workers, at most every StaleCheckInterval: a
// running try whose heartbeat is older than HeartbeatTimeout fails by the
// rule of a reported failure (service.FailDeadTry), and a queued
// instance claimed that long ago but never started goes back to the queue
// unclaimed. Every change is conditional on the state seen, so a worker
// that reports at the same moment wins or loses cleanly.
func (s *Scheduler) checkStale(ctx context.Context, now time.Time, res *passResult) error {
	if !s.due(&s.stale, now, s.Config.StaleCheckInterval, res) {
		return nil
	}
	stale, err := s.Store.TaskInstanceStale(ctx, now.Add(-s.Config.HeartbeatTimeout))
	if err != nil {
		return fmt.Errorf("list stale task instances: %w", err)
	}
	if err := s.requeueCallbacks(ctx, now); err != nil {
		return err
	}
	var unclaim []string
	for i := range stale {
		ti := &stale[i]
		switch ti.State {
		case core.TIQueued:
			unclaim = append(unclaim, ti.ID)
		case core.TIRunning:
			res, err := s.Service.FailDeadTry(ctx, ti)
			switch {
			case benign(err): // its worker reported after all
			case err != nil:
				return fmt.Errorf("end the try of a dead worker: %w", err)
			default:
				s.logDead(ti, res.State)
			}
		default: // the store lists only queued and running instances
		}
	}
	if len(unclaim) > 0 {
		moved, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
			IDs: unclaim, From: []core.TIState{core.TIQueued}, To: core.TIQueued, Now: now,
		})
		if err != nil {
			return fmt.Errorf("release %d stale claims: %w", len(unclaim), err)
		}
		if len(moved) > 0 {
			s.Logger.Warn("released task instances claimed by workers that never started them", "count", len(moved))
			if err := s.Store.Notify(ctx, store.ChannelQueued); err != nil {
				return fmt.Errorf("notify workers: %w", err)
			}
		}
	}
	return nil
}

func (s *Scheduler) logDead(ti *core.TaskInstance, to core.TIState) {
	s.Logger.Warn("task instance's worker stopped heartbeating", "dag_id", ti.DagID, "run_id", ti.RunID,
		"task_id", ti.TaskID, "map_index", ti.MapIndex, "try", ti.TryNumber, "worker_id", ti.WorkerID, "state", to)
}

// requeueCallbacks queues again the running callbacks whose worker stopped
// heartbeating, by the try's timeout, while they have attempts left
// (CallbackMaxAttempts), and fails the others: callbacks run at least once
// (docs/emission.md#callbacks).
func (s *Scheduler) requeueCallbacks(ctx context.Context, now time.Time) error {
	requeued, failed, err := s.Store.CallbackRequeueStale(ctx, &store.CallbackStaleParams{
		Before: now.Add(-s.Config.HeartbeatTimeout), MaxAttempts: s.Config.CallbackMaxAttempts, Now: now})
	if err != nil {
		return fmt.Errorf("queue again the callbacks of dead workers: %w", err)
	}
	if requeued+failed > 0 {
		s.Logger.Warn("callbacks whose worker stopped heartbeating", "queued_again", requeued, "failed", failed)
	}
	return nil
}
