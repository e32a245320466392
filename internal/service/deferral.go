package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// DeferTry moves the running try ti to deferred on the trigger d names,
// as its task's code asks: the trigger row is created and the worker's
// claim ends in one transaction (its slot is free at once), the try does
// not end, and the triggerers are woken. The trigger is checked first (an
// unknown type or bad kwargs is core.ErrInvalid; a type running tasks may
// not use, or a connection the task does not declare, core.ErrForbidden:
// runs.CheckTaskDeferral) and nothing changes; errors wrap
// core.ErrConflict when the try is no longer running. Returns the trigger
// id.
func (s *Service) DeferTry(ctx context.Context, ti *core.TaskInstance, d core.Deferral) (int64, error) {
	v, err := s.DagVersion(ctx, ti.DagVersionID)
	if err != nil {
		return 0, err
	}
	// An invalid trigger is reported as such (400) before the bounds on
	// what running code may use (403).
	if err := s.CheckDeferral(d); err != nil {
		return 0, fmt.Errorf("defer %s: %w", runs.Describe(ti), err)
	}
	if err := runs.CheckTaskDeferral(v.Spec.Task(ti.TaskID), d, s.deferrals); err != nil {
		return 0, fmt.Errorf("defer %s: %w", runs.Describe(ti), err)
	}
	return s.deferTry(ctx, ti, d, core.TIRunning, "")
}

// StartFromTrigger defers a task instance that has not run yet (state
// none) on its task's start trigger, so it begins in the triggerer without
// a worker step (docs/requirements.md#s-6); the scheduler calls it where it would
// otherwise schedule the instance.
func (s *Service) StartFromTrigger(ctx context.Context, ti *core.TaskInstance, d core.Deferral) (int64, error) {
	if err := s.CheckDeferral(d); err != nil {
		return 0, fmt.Errorf("defer %s: %w", runs.Describe(ti), err)
	}
	return s.deferTry(ctx, ti, d, core.TINone, "")
}

// StartProducer starts a stream producer — a deferrable sensor other
// tasks iterate over (docs/streaming.md#lazy-expansion) — from its trigger,
// as StartFromTrigger does, with the trigger's run appending to the run's
// stream for the task (core.TaskStreamID), created bounded by
// [triggerer] stream_max_pending. The sensor's try resumes when the stream
// closes. The trigger's type must stream (core.ErrInvalid naming the
// types that do); so is a stream closed already (a retry after the stream
// failed cannot produce it again). Nothing changes on error.
func (s *Service) StartProducer(ctx context.Context, ti *core.TaskInstance, d core.Deferral) (int64, error) {
	if err := s.triggers.CheckStream(d.Trigger); err != nil {
		return 0, fmt.Errorf("start stream producer %s: %w", runs.Describe(ti), err)
	}
	return s.deferTry(ctx, ti, d, core.TINone, core.TaskStreamID(ti.DagRunID, ti.TaskID))
}

// deferTry defers ti, whose deferral d was checked, from state from; with
// streamID, its trigger produces that stream.
func (s *Service) deferTry(ctx context.Context, ti *core.TaskInstance, d core.Deferral, from core.TIState, streamID string) (int64, error) {
	now := s.clock.Now()
	p := &store.TaskInstanceDeferParams{ID: ti.ID, From: []core.TIState{from}, Trigger: d.Trigger,
		NextMethod: d.NextMethod, NextKwargs: d.NextKwargs, Now: now, StreamID: streamID, MaxPending: s.maxPending}
	if d.Timeout > 0 {
		at := now.Add(d.Timeout.D())
		p.Timeout = &at
	}
	id, err := s.st.TaskInstanceDefer(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("defer %s: %w", runs.Describe(ti), err)
	}
	s.notify(ctx, store.ChannelTrigger)
	return id, nil
}

// CheckDeferral validates a deferral without changing anything
// (trigger.Registry.CheckDeferral over the service's trigger types).
func (s *Service) CheckDeferral(d core.Deferral) error { return s.triggers.CheckDeferral(d) }

// FailStart fails a task instance (state none) that cannot start from its
// trigger — its kwargs do not render, or render to what the type refuses —
// the way a failed trigger fails its waiters: it moves to scheduled with
// next method __fail__ and cause as the message, so a worker fails the try
// with the message in its log and retries follow as for any failure.
func (s *Service) FailStart(ctx context.Context, ti *core.TaskInstance, cause error) error {
	msg := fmt.Sprintf("the task cannot start from its trigger: %v", cause)
	moved, err := s.st.TaskInstanceResume(ctx, &store.TaskInstanceResumeParams{IDs: []string{ti.ID}, FromNone: true,
		Fail: msg, Now: s.clock.Now()})
	if err != nil {
		return fmt.Errorf("fail %s: %w", runs.Describe(ti), err)
	}
	if len(moved) > 0 {
		s.notify(ctx, store.ChannelScheduler)
	}
	return nil
}

// FireTrigger commits one event of trigger id, run by triggerer: every try
// deferred on it goes back to scheduled with payload as its event (each
// resumes once: a second event finds none waiting), and a trigger no try
// waits on any more is deleted — all in one transaction behind the
// triggerer's hold on the trigger, so a triggerer that lost the trigger to
// another (its heartbeat went stale) commits nothing (core.ErrConflict).
// Returns whether anyone still waits on the trigger (false: the triggerer
// stops it).
func (s *Service) FireTrigger(ctx context.Context, id int64, triggerer string, payload json.RawMessage) (bool, error) {
	return s.resumeWaiters(ctx, id, triggerer, &store.TaskInstanceResumeParams{TriggerID: id, Event: payload})
}

// FailTrigger ends trigger id, whose run failed with msg, for every try
// deferred on it: they resume into a failure naming msg (next method
// __fail__; retries follow as for any failed try). Fenced like FireTrigger.
func (s *Service) FailTrigger(ctx context.Context, id int64, triggerer, msg string) error {
	_, err := s.resumeWaiters(ctx, id, triggerer, &store.TaskInstanceResumeParams{TriggerID: id, Fail: msg})
	return err
}

func (s *Service) resumeWaiters(ctx context.Context, id int64, triggerer string, p *store.TaskInstanceResumeParams) (bool, error) {
	p.Now = s.clock.Now()
	waiting := true
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		if err := tx.TriggerHold(ctx, id, triggerer); err != nil {
			return err
		}
		if _, err := tx.TaskInstanceResume(ctx, p); err != nil {
			return err
		}
		n, err := tx.TriggerDeleteUnused(ctx, id)
		waiting = n == 0
		return err
	})
	if err != nil {
		return false, err
	}
	s.notify(ctx, store.ChannelScheduler)
	return waiting, nil
}

// TimeoutDeferred fails the deferred tries whose timeout passed before now
// (at most limit of them): each resumes into a failure naming its
// trigger and timeout. Returns how many it failed.
func (s *Service) TimeoutDeferred(ctx context.Context, limit int) (int, error) {
	now := s.clock.Now()
	due, err := s.st.TaskInstanceDeferredTimedOut(ctx, now, limit)
	if err != nil {
		return 0, err
	}
	failed := 0
	for i := range due {
		ti := &due[i]
		msg := fmt.Sprintf("the trigger did not fire before the deferral's timeout (%s)", ti.TriggerTimeout.UTC().Format(time.RFC3339))
		if ti.TriggerID != nil {
			if tr, err := s.st.TriggerGet(ctx, *ti.TriggerID); err == nil {
				msg = fmt.Sprintf("the %s trigger did not fire before the deferral's timeout (%s)", tr.Type, ti.TriggerTimeout.UTC().Format(time.RFC3339))
			}
		}
		ends := false // a version gone leaves the try to retry, as any timeout
		switch v, err := s.DagVersion(ctx, ti.DagVersionID); {
		case err == nil:
			ends = runs.TimeoutEndsSensor(&v.Spec, v.Spec.Task(ti.TaskID))
		case !errors.Is(err, core.ErrNotFound):
			return failed, err
		}
		moved, err := s.st.TaskInstanceResume(ctx, &store.TaskInstanceResumeParams{IDs: []string{ti.ID}, Fail: msg,
			SensorTimeout: ends, Now: now})
		if err != nil {
			return failed, fmt.Errorf("time out %s: %w", runs.Describe(ti), err)
		}
		failed += len(moved)
		if len(moved) > 0 {
			if err := retireProducer(ctx, s.st, ti); err != nil {
				return failed, err
			}
		}
	}
	if failed > 0 {
		if _, err := s.st.TriggerDeleteUnused(ctx); err != nil {
			s.log.WarnContext(ctx, "delete unused triggers", "err", err)
		}
		s.notify(ctx, store.ChannelScheduler)
	}
	return failed, nil
}

// notify wakes channel's listeners; a failure only delays them until their
// next poll.
func (s *Service) notify(ctx context.Context, channel string) {
	if err := s.st.Notify(ctx, channel); err != nil && !errors.Is(err, context.Canceled) {
		s.log.WarnContext(ctx, "notify", "channel", channel, "err", err)
	}
}
