package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// MaxStreamMaxPending bounds the max_pending a stream may ask for.
const MaxStreamMaxPending = 1_000_000

// StreamOpen describes a stream to open (OpenStream).
type StreamOpen struct {
	// ID names the stream (the trigger run id of its envelopes): 1 to
	// core.MaxStreamIDBytes bytes, no control characters.
	ID string
	// MaxPending bounds the events persisted but not consumed (the
	// producer waits beyond it); 0 = [triggerer] stream_max_pending.
	MaxPending int
	// Trigger, when its Type is set, is the trigger whose run produces the
	// stream: a registered type that streams (trigger.UseStream).
	Trigger core.TriggerSpec
}

// OpenStream creates a stream and, with p.Trigger, the trigger that
// produces it, which a triggerer then claims (docs/streaming.md). Bad
// input (an id, a bound, a trigger type that does not stream, kwargs it
// refuses) is core.ErrInvalid naming the problem; an id in use is
// core.ErrConflict. Nothing is created on error.
func (s *Service) OpenStream(ctx context.Context, p StreamOpen) (*core.Stream, error) {
	if err := checkStreamID(p.ID); err != nil {
		return nil, err
	}
	if p.MaxPending < 0 || p.MaxPending > MaxStreamMaxPending {
		return nil, fmt.Errorf("open stream %s: max_pending must be between 1 and %d (0 = the configured default), got %d: %w",
			p.ID, MaxStreamMaxPending, p.MaxPending, core.ErrInvalid)
	}
	if p.MaxPending == 0 {
		p.MaxPending = s.maxPending
	}
	if p.Trigger.Type != "" {
		if err := s.triggers.CheckStream(p.Trigger); err != nil {
			return nil, fmt.Errorf("open stream %s: %w", p.ID, err)
		}
	}
	st, err := s.st.StreamCreate(ctx, &store.StreamCreateParams{ID: p.ID, MaxPending: p.MaxPending, Trigger: p.Trigger, Now: s.clock.Now()})
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", p.ID, err)
	}
	if p.Trigger.Type != "" {
		s.notify(ctx, store.ChannelTrigger)
	}
	return st, nil
}

// checkStreamID validates a stream id.
func checkStreamID(id string) error {
	if id == "" || len(id) > core.MaxStreamIDBytes {
		return fmt.Errorf("a stream id of 1 to %d bytes is required, got %d bytes: %w", core.MaxStreamIDBytes, len(id), core.ErrInvalid)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("stream id %q holds a control character: %w", id, core.ErrInvalid)
		}
	}
	return nil
}

// CheckStreamPayloads validates events before they are appended: each a
// JSON value of at most core.MaxStreamPayloadBytes. The error names the
// first bad event by its position in the batch and wraps core.ErrInvalid.
func CheckStreamPayloads(payloads []json.RawMessage) error {
	if len(payloads) == 0 {
		return fmt.Errorf("no events given: %w", core.ErrInvalid)
	}
	for i, p := range payloads {
		switch {
		case len(p) > core.MaxStreamPayloadBytes:
			return fmt.Errorf("event %d of %d is %d bytes, more than the limit of %d bytes per event (store large data elsewhere and send its location): %w",
				i+1, len(payloads), len(p), core.MaxStreamPayloadBytes, core.ErrInvalid)
		case !json.Valid(p):
			return fmt.Errorf("event %d of %d is not a JSON value: %w", i+1, len(payloads), core.ErrInvalid)
		}
	}
	return nil
}

// AppendTriggerEvents appends payloads to the stream trigger id produces,
// as many as the stream's max_pending leaves room for (the result says how
// many; the triggerer waits for room and appends the rest), in one
// transaction behind triggerer's hold on the trigger: a triggerer that
// lost the trigger appends nothing (core.ErrConflict). The events are
// persisted when it returns; consumers are notified.
func (s *Service) AppendTriggerEvents(ctx context.Context, id int64, triggerer, streamID string, payloads []json.RawMessage) (*store.StreamAppendResult, error) {
	if err := CheckStreamPayloads(payloads); err != nil {
		return nil, fmt.Errorf("append to stream %s: %w", streamID, err)
	}
	var res *store.StreamAppendResult
	resumed := 0
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		if err := tx.TriggerHold(ctx, id, triggerer); err != nil {
			return err
		}
		var err error
		res, err = tx.StreamAppend(ctx, &store.StreamAppendParams{StreamID: streamID, Payloads: payloads, Now: s.clock.Now()})
		if err != nil || res.Accepted == 0 {
			return err
		}
		// A streaming operator waiting on the trigger resumes at the
		// first event, and handles the rest as they come.
		ev, err := json.Marshal(streamRef{StreamID: streamID})
		if err != nil {
			return err
		}
		ids, err := tx.TaskInstanceResume(ctx, &store.TaskInstanceResumeParams{TriggerID: id, Method: core.NextMethodStream,
			Event: ev, Now: s.clock.Now()})
		resumed = len(ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	if res.Accepted > 0 {
		s.notify(ctx, store.ChannelStream)
	}
	if resumed > 0 {
		s.notify(ctx, store.ChannelScheduler)
	}
	return res, nil
}

// CloseTriggerStream closes the stream trigger id produced, once its run
// ended (msg "") or failed (msg says why): its last envelope becomes
// is_last, a producer task deferred on the trigger resumes (with the
// event {"stream_id", "events"} when the run ended, into a failure naming
// msg when it failed), and the trigger, which nothing uses any more, is
// deleted. A failed run whose producer has tries left leaves the stream
// open instead: the producer's retry starts a trigger that resumes it
// after its last item, as after a timeout. Fenced like
// AppendTriggerEvents.
func (s *Service) CloseTriggerStream(ctx context.Context, id int64, triggerer, streamID, msg string) error {
	resumed := 0
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		if err := tx.TriggerHold(ctx, id, triggerer); err != nil {
			return err
		}
		if msg != "" {
			n, kept, err := s.failKeepingStream(ctx, tx, id, streamID, msg)
			if kept || err != nil {
				resumed = n
				return err
			}
		}
		var err error
		resumed, err = s.closeStreamTx(ctx, tx, id, streamID, msg)
		return err
	})
	return s.afterClose(ctx, "close", streamID, resumed, err)
}

// afterClose ends a close of streamID (what: "close" or "stop") that
// resumed tries and returned err: the error named, or the stream's
// waiters — and the scheduler, for the resumed tries — told.
func (s *Service) afterClose(ctx context.Context, what, streamID string, resumed int, err error) error {
	if err != nil {
		return fmt.Errorf("%s stream %s: %w", what, streamID, err)
	}
	s.notify(ctx, store.ChannelStream)
	if resumed > 0 {
		s.notify(ctx, store.ChannelScheduler)
	}
	return nil
}

// closeStreamTx closes streamID with msg in tx, resumes the producer
// task deferred on its trigger id (with the stream's end, or failing
// with msg) and deletes the trigger if nothing uses it any more. It
// returns how many tries resumed.
func (s *Service) closeStreamTx(ctx context.Context, tx store.Store, id int64, streamID, msg string) (int, error) {
	st, err := tx.StreamClose(ctx, &store.StreamCloseParams{StreamID: streamID, Error: msg, Now: s.clock.Now()})
	if err != nil || id == 0 {
		return 0, err
	}
	p := &store.TaskInstanceResumeParams{TriggerID: id, Fail: msg, Now: s.clock.Now()}
	if msg == "" {
		if p.Event, err = json.Marshal(streamEnd{StreamID: streamID, Events: st.NextIndex}); err != nil {
			return 0, err
		}
	}
	ids, err := tx.TaskInstanceResume(ctx, p)
	if err != nil {
		return 0, err
	}
	_, err = tx.TriggerDeleteUnused(ctx, id)
	return len(ids), err
}

// failKeepingStream resumes the producers deferred on trigger id, whose
// run failed with msg, into that failure without closing streamID when
// each has a try left (kept true): their retries resume the stream.
func (s *Service) failKeepingStream(ctx context.Context, tx store.Store, id int64, streamID, msg string) (int, bool, error) {
	waiting, err := tx.TaskInstanceList(ctx, &store.TaskInstanceListParams{TriggerID: id, States: []core.TIState{core.TIDeferred}})
	if err != nil || len(waiting) == 0 {
		return 0, false, err
	}
	for _, ti := range waiting {
		if !runs.TriesLeft(&ti) {
			return 0, false, nil
		}
	}
	ids, err := tx.TaskInstanceResume(ctx, &store.TaskInstanceResumeParams{TriggerID: id, Now: s.clock.Now(),
		Fail: msg + " (stream " + streamID + " stays open: the retry resumes it after its last item)"})
	if err != nil {
		return 0, false, err
	}
	_, err = tx.TriggerDeleteUnused(ctx, id)
	return len(ids), true, err
}

// StopStream closes streamID with the reason msg on behalf of its
// consumers (an expansion over it grew past its cap): a producer task
// deferred on its trigger fails with msg, the trigger is deleted, so its
// triggerer stops it at its next reconcile, and a producer that pushes
// has its next push refused. A closed stream changes nothing.
func (s *Service) StopStream(ctx context.Context, streamID, msg string) error {
	resumed := 0
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		st, err := tx.StreamGet(ctx, streamID)
		if err != nil || st.Closed {
			return err
		}
		resumed, err = s.closeStreamTx(ctx, tx, st.TriggerID, streamID, msg)
		return err
	})
	return s.afterClose(ctx, "stop", streamID, resumed, err)
}

// streamEnd is the event a producer task resumes with when its stream
// closes: its return value.
type streamEnd struct {
	StreamID string `json:"stream_id"`
	Events   int64  `json:"events"`
}

// ConsumeStream marks the events of stream id with sequence indexes from
// from to through (inclusive) consumed, making room for its producer, and
// returns how many it marked (each is consumed once).
func (s *Service) ConsumeStream(ctx context.Context, id string, from, through int64) (int, error) {
	if from < 0 || through < from {
		return 0, fmt.Errorf("consume events %d..%d of stream %s: a range of sequence indexes from 0 is required: %w", from, through, id, core.ErrInvalid)
	}
	n, err := s.st.StreamConsume(ctx, &store.StreamConsumeParams{StreamID: id, From: from, Through: through, Now: s.clock.Now()})
	if err != nil {
		return 0, fmt.Errorf("consume events %d..%d of stream %s: %w", from, through, id, err)
	}
	if n > 0 {
		s.notify(ctx, store.ChannelStream)
	}
	return n, nil
}

// streamCleanupBatch is how many envelopes one cleanup statement deletes.
const streamCleanupBatch = 10_000

// CleanStreams deletes the envelopes consumed more than retention ago,
// and closed streams with nothing left, in batches; returns how many
// envelopes went.
func (s *Service) CleanStreams(ctx context.Context, retention time.Duration) (int, error) {
	if retention < 0 {
		return 0, errors.New("clean streams: negative retention")
	}
	before := s.clock.Now().Add(-retention)
	total := 0
	for {
		n, err := s.st.StreamCleanup(ctx, before, streamCleanupBatch)
		total += n
		if err != nil || n < streamCleanupBatch {
			return total, err
		}
	}
}
