package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// checkStale handles dead workers, at most every StaleCheckInterval: a
// running try whose heartbeat is older than HeartbeatTimeout fails (up_for_
// retry with runs.NextRetryAt when tries remain, else failed), and a queued
// instance claimed that long ago but never started goes back to the queue
// unclaimed. Every change is conditional on the state seen, so a worker
// that reports at the same moment wins or loses cleanly.
func (s *Scheduler) checkStale(ctx context.Context, now time.Time, res *passResult) error {
	s.mu.Lock()
	due := s.lastStale.IsZero() || !now.Before(s.lastStale.Add(s.Config.StaleCheckInterval))
	if due {
		s.lastStale = now
	}
	next := s.lastStale.Add(s.Config.StaleCheckInterval)
	s.mu.Unlock()
	res.earliest(next)
	if !due {
		return nil
	}
	stale, err := s.Store.TaskInstanceStale(ctx, now.Add(-s.Config.HeartbeatTimeout))
	if err != nil {
		return fmt.Errorf("list stale task instances: %w", err)
	}
	var unclaim, failed []string
	for i := range stale {
		ti := &stale[i]
		switch ti.State {
		case core.TIQueued:
			unclaim = append(unclaim, ti.ID)
		case core.TIRunning:
			if ti.TryNumber >= ti.MaxTries {
				failed = append(failed, ti.ID)
				s.logDead(ti, core.TIFailed)
				continue
			}
			if err := s.retryDead(ctx, ti, now); err != nil {
				return err
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
	if len(failed) > 0 {
		if _, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
			IDs: failed, From: []core.TIState{core.TIRunning}, To: core.TIFailed, Now: now,
		}); err != nil {
			return fmt.Errorf("fail %d task instances of dead workers: %w", len(failed), err)
		}
	}
	return nil
}

// retryDead moves a dead worker's running try to up_for_retry.
func (s *Scheduler) retryDead(ctx context.Context, ti *core.TaskInstance, now time.Time) error {
	g, err := s.graph(ctx, ti.DagVersionID)
	if err != nil {
		return err
	}
	at := now
	if task := g.tasks[ti.TaskID]; task != nil {
		at = runs.NextRetryAt(task, ti.TryNumber, now)
	}
	if _, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
		IDs: []string{ti.ID}, From: []core.TIState{core.TIRunning}, To: core.TIUpForRetry, Now: now, NextRetryAt: &at,
	}); err != nil {
		return fmt.Errorf("retry %s of a dead worker: %w", runs.Describe(ti), err)
	}
	s.logDead(ti, core.TIUpForRetry)
	return nil
}

func (s *Scheduler) logDead(ti *core.TaskInstance, to core.TIState) {
	s.Logger.Warn("task instance's worker stopped heartbeating", "dag_id", ti.DagID, "run_id", ti.RunID,
		"task_id", ti.TaskID, "map_index", ti.MapIndex, "try", ti.TryNumber, "worker_id", ti.WorkerID, "state", to)
}
