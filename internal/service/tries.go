package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/callback"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// FinishResult is how a try ended.
type FinishResult struct {
	State       core.TIState // success, failed, skipped or up_for_retry
	NextRetryAt *time.Time   // with up_for_retry
	// Next are the tries TryEnd.Claim claimed for the reporting worker
	// with the end.
	Next []core.TaskInstance
	// Runs are the runs of Next's tries by id, read in the end's
	// transaction (by the claim's statement on PostgreSQL; on SQLite from
	// the writer's warm page cache): who answers with Next need not read
	// them again.
	Runs map[int64]*core.DagRun
}

// FinishTry ends the running try ti as its worker reported (success,
// failed, skipped or up_for_retry): the retry decision is runs.Outcome; a
// success records an asset event per concrete outlet of the task (and the
// try's additions to alias outlets) and, with [state_store]
// clear_on_success, deletes the instance's task state, all in the
// transaction that ends the try. The scheduler is notified. The caller has
// checked that the try is the one reporting (its token); errors wrap
// core.ErrConflict when it is no longer running and core.ErrInvalid for a
// state a try cannot end in.
//
// A try failed over for missed heartbeats (FailDeadTry: up_for_retry, its
// retry not begun, so the token's try is still current) takes its worker's
// late report as its end, by the same rules
// (docs/state-machines.md#dead-workers): a late success stands, so a slow
// or cut-off worker's finished command is not run again. Any other try
// that is not running is refused with core.ErrConflict.
func (s *Service) FinishTry(ctx context.Context, ti *core.TaskInstance, reported core.TIState) (*FinishResult, error) {
	return s.EndTry(ctx, ti, TryEnd{State: reported})
}

// TryEnd is a worker's report of a try's end and what it carries.
type TryEnd struct {
	State core.TIState // as FinishTry's reported
	// Failure, with state failed, says how the try failed (runs.Failure):
	// by itself, for good (no_retry: a sensor's timeout), or interrupted
	// by its worker's shutdown (retried at once, the try refunded).
	Failure runs.Failure
	// Claim, when set, is claimed for the reporting worker in the
	// transaction that ends the try (store.TaskInstanceClaim, started
	// with Claim.Start as ClaimTries starts them): a finishing try hands
	// its slot on to the next queued try, often the one its success
	// queued, without a claim of its own (FinishResult.Next; ADR 0032).
	// The workers are woken for what the end queued only when the claim
	// did not take it all. A claim that fails fails the end (its worker
	// reports it again without Claim).
	Claim *store.TaskInstanceClaimParams
	// Before, when set, runs first in that transaction (the end of the
	// try's log is stored with its end); its error is the end's.
	Before func(tx store.Store) error
	// seen, for FailDeadTry, is the last heartbeat the check read.
	seen *store.HeartbeatSeen
}

// EndTry is FinishTry with what the report carries (TryEnd).
func (s *Service) EndTry(ctx context.Context, ti *core.TaskInstance, end TryEnd) (*FinishResult, error) {
	return s.endTry(ctx, ti, end, s.clearOnSuccess, false)
}

// HeartbeatTry records a heartbeat of ti's worker. A try failed over for
// missed heartbeats (FailDeadTry) whose retry has not begun goes back to
// running, so a worker that was only cut off keeps
// its try instead of having it killed and run again; the scheduler is
// notified. Errors wrap core.ErrConflict when the try is neither running
// nor failed over, core.ErrNotFound when a new try replaced it.
func (s *Service) HeartbeatTry(ctx context.Context, ti *core.TaskInstance) error {
	now := s.clock.Now()
	if ti.State != core.TIUpForRetry {
		return s.st.TaskInstanceHeartbeat(ctx, ti.ID, now)
	}
	if err := s.st.TaskInstanceTakeBack(ctx, ti.ID, now); err != nil {
		return fmt.Errorf("take back %s: %w", runs.Describe(ti), err)
	}
	s.notify(ctx, store.ChannelScheduler)
	return nil
}

// FailDeadTry ends the running try ti of a worker that stopped
// heartbeating, by the same rule as a worker's report of failed: it goes to
// up_for_retry while tries remain, else failed; the try's pending alias
// additions are dropped. An up_for_retry try is marked failed over: until
// its retry begins, its worker's late heartbeat takes it back
// (HeartbeatTry) and its late report ends it (FinishTry). Errors wrap core.ErrConflict when the try ended
// meanwhile (its worker reported after all).
// The end holds only while the try's last heartbeat is still ti's: a
// heartbeat that came after the check read ti keeps the try its worker's
// (core.ErrConflict), whose report would else find it replaced.
func (s *Service) FailDeadTry(ctx context.Context, ti *core.TaskInstance) (*FinishResult, error) {
	return s.endTry(ctx, ti, TryEnd{State: core.TIFailed, seen: &store.HeartbeatSeen{At: ti.LastHeartbeat}}, false, true)
}

func (s *Service) endTry(ctx context.Context, ti *core.TaskInstance, end TryEnd, clearState, failedOver bool) (*FinishResult, error) {
	reported, claim := end.State, end.Claim
	now := s.clock.Now()
	v, err := s.DagVersion(ctx, ti.DagVersionID)
	if err != nil {
		return nil, err
	}
	task := v.Spec.Task(ti.TaskID)
	state, next, err := runs.Outcome(task, ti, reported, end.Failure, now)
	if err != nil {
		return nil, fmt.Errorf("finish %s: %w", runs.Describe(ti), err)
	}
	p := &store.TaskInstanceFinishParams{ID: ti.ID, State: state, From: ti.State, Now: now, NextRetryAt: next, SeenHeartbeat: end.seen,
		ClearTaskState: clearState, FailedOver: failedOver, NoAliases: task != nil && !task.HasAliasOutlet(),
		RefundTry: state == core.TIUpForRetry && runs.Refunds(ti, end.Failure)}
	if state == core.TISuccess && task != nil {
		p.OutletEvents = outletEvents(&v.Spec, task, ti, now)
	}
	// The try's callbacks are fired in the transaction that ends it: both
	// commit, or neither (ADR 0015). A try failed over to up_for_retry
	// fires on_retry when its retry begins (BeginRetry), not now.
	var fired []core.Callback
	if !failedOver || state != core.TIUpForRetry {
		fired = callback.FireForTry(task, ti, state)
	}
	// A success schedules and queues what follows it in the same
	// transaction (followOn); the scheduler is woken for the rest.
	follows := state == core.TISuccess && task != nil && runs.HasDownstream(&v.Spec, task.TaskID)
	var (
		f        followed
		claimed  []core.TaskInstance
		nextRuns map[int64]*core.DagRun // of claimed
	)
	record := func(tx store.Store) error {
		f, claimed, nextRuns = followed{}, nil, nil // a retried transaction starts over
		if end.Before != nil {
			if err := end.Before(tx); err != nil {
				return err
			}
		}
		// The end's update goes with the next statement (on PostgreSQL
		// one round trip with the follow-on's reads); whether it applied
		// is known before anything of the end is decided on it (ended).
		ended, err := tx.TaskInstanceFinishLater(ctx, p)
		if err != nil {
			return err
		}
		if err := tx.CallbackInsert(ctx, fired, now); err != nil {
			return err
		}
		if follows {
			var err error
			if f, err = s.followOn(ctx, tx, &v.Spec, ti); err != nil {
				if endErr := ended(); endErr != nil {
					return endErr // the end's own failure, not its follow-on's
				}
				return followOnError{err}
			}
		}
		// The claim's failure fails the end, which its worker reports
		// again without the claim. Its error keeps no sentinel but
		// ErrUnavailable (the client then tries another api-server): a
		// conflict of the claim's must not read as the try's (not
		// running), nor anything as the report's fault.
		if claim != nil {
			c := *claim
			c.Now = s.clock.Now() // after followOn's reads, as its own dates (followOn)
			nextRuns = map[int64]*core.DagRun{}
			if f.run != nil {
				nextRuns[f.run.ID] = f.run
			}
			c.Runs = nextRuns
			var err error
			claimed, err = s.claimIn(ctx, tx, &c)
			if err != nil {
				if endErr := ended(); endErr != nil {
					return endErr // the end's own failure, not the claim's
				}
			}
			if errors.Is(err, core.ErrUnavailable) {
				return fmt.Errorf("claim the next try for worker %s: %w", c.WorkerID, err)
			} else if err != nil {
				return fmt.Errorf("claim the next try for worker %s: %v", c.WorkerID, err) //nolint:errorlint // no sentinel (above)
			}
		}
		if err := ended(); err != nil {
			return err
		}
		if !takenAll(f.queued, claimed) {
			return notifyQueued(ctx, tx)
		}
		return nil
	}
	inTx := len(fired) > 0 || follows || claim != nil || end.Before != nil
	err = s.commitEnd(ctx, inTx, record)
	// What follows is the scheduler's when deciding it here fails (a
	// deadlock, a lost DAG version): the success stands, ended again
	// without it. (A savepoint around the follow-on would cost two round
	// trips on PostgreSQL in every end, not only in a failing one.) Its
	// queueing update goes with the statement after it (the claim, or
	// the commit; in a group commit the next end's first statement:
	// queueLocked's unread), so a failure after a follow-on that queued
	// may be that update's: the same, unless the database is out of
	// reach or the caller gone (ending again would fail as well).
	if fe := (followOnError{}); errors.As(err, &fe) || err != nil && len(f.queued) > 0 &&
		ctx.Err() == nil && !errors.Is(err, core.ErrUnavailable) {
		s.log.Warn("what follows a try's success is left to the scheduler", "ti", runs.Describe(ti), "err", err)
		follows = false
		err = s.commitEnd(ctx, inTx, record)
	}
	if err != nil {
		return nil, fmt.Errorf("finish %s as %s: %w", runs.Describe(ti), state, err)
	}
	s.queued(QueuedByTryEnd, len(f.queued))
	if ch := finishedChannel(task, f.settled); ch != "" {
		s.notify(ctx, ch)
	}
	return &FinishResult{State: state, NextRetryAt: next, Next: claimed, Runs: nextRuns}, nil
}

// followOnError is followOn's failure inside a try's end.
type followOnError struct{ err error }

func (e followOnError) Error() string { return "decide what follows: " + e.err.Error() }
func (e followOnError) Unwrap() error { return e.err }

// takenAll reports whether claimed holds every instance of queued: then
// no other worker need be woken for them.
func takenAll(queued []string, claimed []core.TaskInstance) bool {
	for _, id := range queued {
		if !slices.ContainsFunc(claimed, func(ti core.TaskInstance) bool { return ti.ID == id }) {
			return false
		}
	}
	return true
}

// finishedChannel is whom the end of a try of task concerns: nobody when
// followOn settled it, the scheduler's next pass over the running runs
// (ChannelTasks), or, when the task has outlets (its success may start
// asset-triggered runs), a whole pass (ChannelScheduler).
func finishedChannel(task *core.Task, settled bool) string {
	switch {
	case task == nil || len(task.Outlets) > 0:
		return store.ChannelScheduler
	case settled:
		return ""
	}
	return store.ChannelTasks
}

// outletEvents returns one asset event per concrete outlet task declares
// (aliases produce none here: the store adds the try's alias additions);
// they commit with the success (docs/assets.md).
func outletEvents(dag *core.DAG, task *core.Task, ti *core.TaskInstance, now time.Time) []store.AssetEventParams {
	var out []store.AssetEventParams
	for _, a := range dag.ConcreteAssets(task.Outlets) {
		out = append(out, store.AssetEventParams{AssetName: a.Name, SourceKind: core.AssetSourceTask,
			SourceDagID: ti.DagID, SourceRunID: ti.RunID, SourceTaskID: ti.TaskID, SourceMapIndex: ti.MapIndex,
			SourceTryNumber: ti.TryNumber, Now: now})
	}
	return out
}
