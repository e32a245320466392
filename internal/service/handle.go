package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// MaxHandlerBatch bounds the events one read of a streaming operator
// returns (HandlerEvents).
const MaxHandlerBatch = 1000

// streamRef is the event a streaming operator's try resumes with: the
// stream it handles (the worker reads the events themselves).
type streamRef struct {
	StreamID string `json:"stream_id"`
}

// StartHandler starts a streaming operator — a sensor with a handler
// (core.Task.HandlesStream; docs/streaming.md#streaming-operators). Its
// first try defers on the trigger, whose run fills the run's stream for
// the task (core.TaskStreamID), with next method core.NextMethodStream:
// the stream's first event resumes it on a worker (AppendTriggerEvents),
// which then handles the events in order while the trigger still
// produces. A later try, once the stream exists, goes to a worker at
// once, without a new trigger: it resumes handling where the stream's
// consumption stands. The trigger's type must stream (core.ErrInvalid).
func (s *Service) StartHandler(ctx context.Context, ti *core.TaskInstance, d core.Deferral) (int64, error) {
	id := core.TaskStreamID(ti.DagRunID, ti.TaskID)
	_, err := s.st.StreamGet(ctx, id)
	switch {
	case errors.Is(err, core.ErrNotFound):
		if err := s.triggers.CheckStream(d.Trigger); err != nil {
			return 0, fmt.Errorf("start streaming operator %s: %w", runs.Describe(ti), err)
		}
		d.NextMethod = core.NextMethodStream
		return s.deferTry(ctx, ti, d, core.TINone, id)
	case err != nil:
		return 0, fmt.Errorf("start streaming operator %s: %w", runs.Describe(ti), err)
	}
	ev, err := json.Marshal(streamRef{StreamID: id})
	if err != nil {
		return 0, err
	}
	moved, err := s.st.TaskInstanceResume(ctx, &store.TaskInstanceResumeParams{IDs: []string{ti.ID}, FromNone: true,
		Event: ev, Now: s.clock.Now()})
	if err != nil {
		return 0, fmt.Errorf("resume streaming operator %s on its stream %s: %w", runs.Describe(ti), id, err)
	}
	if len(moved) > 0 {
		s.notify(ctx, store.ChannelScheduler)
	}
	return 0, nil
}

// HandlerEvents returns up to limit events of the stream ti's streaming
// operator handles, from sequence index from (-1 = the first event not
// handled yet), with where the stream stands. Before the stream exists it
// is empty and open. A task without a handler is core.ErrInvalid.
func (s *Service) HandlerEvents(ctx context.Context, ti *core.TaskInstance, from int64, limit int) (*core.HandlerBatch, error) {
	what := "read the events of " + runs.Describe(ti)
	id, err := s.handledStream(ctx, ti)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if limit < 1 || limit > MaxHandlerBatch {
		limit = MaxHandlerBatch
	}
	st, err := s.st.StreamGet(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return &core.HandlerBatch{StreamID: id, Events: []core.StreamEvent{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	b := &core.HandlerBatch{StreamID: id, Handled: handledUpTo(st), NextIndex: st.NextIndex, Closed: st.Closed, Error: st.Error}
	if from < 0 {
		from = b.Handled
	}
	b.Events, err = s.st.StreamEventList(ctx, &store.StreamEventListParams{StreamID: id, After: from - 1, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

// handledUpTo is the first sequence index a streaming operator has not
// handled: its handler consumes in order, so the pending envelopes are
// the stream's last ones.
func handledUpTo(st *core.Stream) int64 { return st.NextIndex - int64(st.Pending) }

// StreamHandled records that ti's streaming operator handled its stream's
// events up to sequence index through: they are consumed, durably (the
// position a retry resumes at), making room for the producer. A position
// already recorded changes nothing; one past the stream's end is
// core.ErrInvalid. Returns the first index not handled.
func (s *Service) StreamHandled(ctx context.Context, ti *core.TaskInstance, through int64) (int64, error) {
	what := fmt.Sprintf("record events up to %d handled by %s", through, runs.Describe(ti))
	id, err := s.handledStream(ctx, ti)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	st, err := s.st.StreamGet(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	from := handledUpTo(st)
	switch {
	case through >= st.NextIndex:
		return 0, fmt.Errorf("%s: the stream %s holds %d events (the last has sequence index %d): %w",
			what, id, st.NextIndex, st.LastIndex(), core.ErrInvalid)
	case through < from:
		return from, nil
	}
	if _, err := s.ConsumeStream(ctx, id, from, through); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return through + 1, nil
}

// handledStream returns the id of the stream ti's streaming operator
// handles, or core.ErrInvalid when its task has no handler.
func (s *Service) handledStream(ctx context.Context, ti *core.TaskInstance) (string, error) {
	v, err := s.DagVersion(ctx, ti.DagVersionID)
	if err != nil {
		return "", err
	}
	if t := v.Spec.Task(ti.TaskID); t == nil || !t.HandlesStream() {
		return "", fmt.Errorf("task %q has no stream handler (handle_command or handle_function): %w", ti.TaskID, core.ErrInvalid)
	}
	return core.TaskStreamID(ti.DagRunID, ti.TaskID), nil
}
