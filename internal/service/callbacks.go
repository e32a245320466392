package service

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/callback"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// inTxIf runs fn in one transaction when a state change fires callbacks
// (they commit with it, or neither does: ADR 0015), else directly.
func (s *Service) inTxIf(ctx context.Context, fires bool, fn func(tx store.Store) error) error {
	if !fires {
		return fn(s.st)
	}
	return s.st.WithTx(ctx, fn)
}

// StartTry moves a try its worker claimed to running and fires the task's
// on_execute callbacks in the same transaction; a try resuming after a
// deferral fires none (its execution began before). Errors are the
// store's: core.ErrConflict when the try is not queued and claimed by
// p.WorkerID.
func (s *Service) StartTry(ctx context.Context, p *store.TaskInstanceStartParams, dagVersionID int64) (*core.TaskInstance, error) {
	v, err := s.DagVersion(ctx, dagVersionID)
	if err != nil {
		return nil, err
	}
	var started *core.TaskInstance
	start := func(tx store.Store) error {
		ti, err := tx.TaskInstanceStart(ctx, p)
		if err != nil {
			return err
		}
		started = ti
		return tx.CallbackInsert(ctx, executeCallbacks(v, ti), p.Now)
	}
	if err := s.inTxIf(ctx, hasCallbacks(&v.Spec, core.OnExecute), start); err != nil {
		return nil, err
	}
	return started, nil
}

// ClaimTries claims work for a worker (store.TaskInstanceClaim). With
// p.Start the claimed tries start in the claim's statement and, as
// StartTry does, the on_execute callbacks of those that begin (not a
// resumption after a deferral) are fired in its transaction.
func (s *Service) ClaimTries(ctx context.Context, p *store.TaskInstanceClaimParams) ([]core.TaskInstance, error) {
	if !p.Start {
		return s.st.TaskInstanceClaim(ctx, p)
	}
	var claimed []core.TaskInstance
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		var err error
		claimed, err = s.claimIn(ctx, tx, p)
		return err
	})
	return claimed, err
}

// claimIn claims in tx what p asks; the tries it starts (p.Start) fire
// their on_execute callbacks in tx.
func (s *Service) claimIn(ctx context.Context, tx store.Store, p *store.TaskInstanceClaimParams) ([]core.TaskInstance, error) {
	q := *p
	if q.Start {
		q.Started = func(started []core.TaskInstance) error {
			var fired []core.Callback
			for i := range started {
				v, err := s.DagVersion(ctx, started[i].DagVersionID)
				if err != nil {
					return err
				}
				fired = append(fired, executeCallbacks(v, &started[i])...)
			}
			return tx.CallbackInsert(ctx, fired, p.Now)
		}
	}
	return tx.TaskInstanceClaim(ctx, &q)
}

// executeCallbacks returns the on_execute callbacks a try of v fires as it
// starts: none when it resumes after a deferral (its execution began
// before).
func executeCallbacks(v *core.DagVersion, ti *core.TaskInstance) []core.Callback {
	if resuming(ti) {
		return nil
	}
	return callback.FireForTry(v.Spec.Task(ti.TaskID), ti, core.TIRunning)
}

// resuming reports whether a started try resumes after a deferral.
func resuming(ti *core.TaskInstance) bool {
	return ti.NextMethod != "" || ti.NextEvent != nil || ti.NextKwargs != nil
}

// hasCallbacks reports whether any task of dag has callbacks for ev.
func hasCallbacks(dag *core.DAG, ev core.CallbackEvent) bool {
	for i := range dag.Tasks {
		if len(dag.Tasks[i].Callbacks.For(ev)) > 0 {
			return true
		}
	}
	return false
}

// FinishRun moves a running run to its final state (success or failed)
// and fires the DAG's callbacks for it in the same transaction. It
// reports whether the run was still running (false: another scheduler
// finished it, and nothing was fired).
func (s *Service) FinishRun(ctx context.Context, run *core.DagRun, dag *core.DAG, state core.DagRunState, now time.Time) (bool, error) {
	var finished bool
	fired := callback.FireForRun(dag, run, state)
	err := s.inTxIf(ctx, len(fired) > 0, func(tx store.Store) error {
		ok, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, From: []core.DagRunState{core.RunRunning}, To: state, Now: now})
		if err != nil || !ok {
			return err
		}
		finished = true
		return tx.CallbackInsert(ctx, fired, now)
	})
	if err != nil {
		return false, fmt.Errorf("finish run %s/%s as %s: %w", run.DagID, run.RunID, state, err)
	}
	if finished {
		s.notify(ctx, store.ChannelScheduler) // a slot for the DAG's next run opened
	}
	return finished, nil
}

// BeginRetry begins the retry of ti, an up_for_retry try (p moves it to a
// new try), and fires ti's on_retry callbacks in the same transaction when
// they have not fired yet: a try failed over for missed heartbeats
// (FailDeadTry) fires on_retry only here, when its retry is certain,
// because until then its worker may take it back or report it late — so a
// failed-over try that ends in success fires on_success alone, never
// on_retry too (docs/emission.md#callbacks). task is ti's task.
func (s *Service) BeginRetry(ctx context.Context, task *core.Task, ti *core.TaskInstance, p *store.TaskInstanceNewTryParams) error {
	fired := callback.FireForTry(task, ti, core.TIUpForRetry)
	if len(fired) > 0 {
		done, err := s.st.CallbackList(ctx, &store.CallbackListParams{DagRunID: ti.DagRunID, TaskID: ti.TaskID, Page: store.Page{Limit: 1000}})
		if err != nil {
			return fmt.Errorf("read the callbacks of %s: %w", runs.Describe(ti), err)
		}
		for _, cb := range done {
			if cb.Event == core.OnRetry && cb.MapIndex == ti.MapIndex && cb.TryNumber == ti.TryNumber {
				fired = nil // fired when the try's worker reported it
				break
			}
		}
	}
	return s.inTxIf(ctx, len(fired) > 0, func(tx store.Store) error {
		if err := tx.TaskInstanceNewTry(ctx, p); err != nil {
			return err
		}
		return tx.CallbackInsert(ctx, fired, p.Now)
	})
}
