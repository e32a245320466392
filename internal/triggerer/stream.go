package triggerer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/trigger"
)

// streamPoll is how often a producer waiting for room looks again when no
// notification arrives (consumers in another process on SQLite).
const streamPoll = 200 * time.Millisecond

// runStream runs trigger row, whose run produces stream row.StreamID
// (docs/streaming.md): it tells the trigger where the stream stands, appends
// each event it emits behind the hold on the trigger, waiting for room
// while max_pending events are unconsumed, and closes the stream when the
// run ends (or records why it failed). A run stopped by ctx leaves the
// stream open for the next run, which resumes after the last event.
func (t *Triggerer) runStream(ctx context.Context, stop context.CancelFunc, row *core.Trigger, tr trigger.Trigger) {
	log := t.Logger.With("trigger_id", row.ID, "type", row.Type, "stream_id", row.StreamID)
	st, err := t.Store.StreamGet(ctx, row.StreamID)
	if err != nil {
		log.Warn("read the trigger's stream", "err", err)
		t.unstart(stop, row.ID)
		return
	}
	if st.Closed {
		return // closed by an earlier run; cleanup deletes the trigger
	}
	rt := &trigger.Runtime{ID: row.ID, CreatedAt: row.CreatedAt, Clock: t.Clock, Log: t.logWriter(ctx, log, row),
		Connections: t.Connections, Runs: t.Store,
		Stream: &trigger.StreamPosition{ID: st.ID, LastIndex: st.LastIndex()}}
	next := st.NextIndex // the index the stream's next envelope gets
	rt.EmitBatchFunc = func(ectx context.Context, es []trigger.Event) error { return t.appendAll(ectx, stop, row, &next, es) }
	rt.EmitFunc = func(ectx context.Context, e trigger.Event) error {
		return t.appendAll(ectx, stop, row, &next, []trigger.Event{e})
	}
	err = runSafely(ctx, tr, rt)
	if ctx.Err() != nil {
		return // stopped: moved, or the triggerer stops; the stream stays open
	}
	msg := ""
	if err != nil {
		msg = fmt.Sprintf("the %s trigger failed: %v", row.Type, err)
		log.Warn("stream trigger failed", "reason", msg)
		t.failed(row.Type)
	}
	if err := t.Service.CloseTriggerStream(ctx, row.ID, t.id, row.StreamID, msg); err != nil && !errors.Is(err, core.ErrConflict) {
		// Not closed: run it again at the next reconcile, which resumes
		// after the last event and closes the stream.
		log.Warn("close the trigger's stream", "err", err)
		t.unstart(stop, row.ID)
	}
}

// appendAll appends es to row's stream in order, waiting for room while
// the stream has max_pending unconsumed events; it returns once all are
// committed, or with the error that stopped it.
func (t *Triggerer) appendAll(ctx context.Context, stop context.CancelFunc, row *core.Trigger, next *int64, es []trigger.Event) error {
	payloads := make([]json.RawMessage, len(es))
	for i := range es {
		payloads[i] = es[i].Payload
	}
	var wake <-chan struct{}
	var poll *time.Timer
	for {
		accepted, err := t.appendOnce(ctx, row, next, payloads)
		if err != nil {
			if errors.Is(err, core.ErrConflict) {
				stop() // another triggerer owns it now
			}
			return fmt.Errorf("commit events of trigger %d: %w", row.ID, err)
		}
		t.fired(row.Type, accepted)
		payloads = payloads[accepted:]
		if len(payloads) == 0 {
			return nil
		}
		if wake == nil {
			// Subscribe, then try again before waiting: room made between
			// the append and the subscription is not missed.
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			wake = t.Store.Subscribe(sctx, store.ChannelStream)
			poll = time.NewTimer(streamPoll)
			defer poll.Stop()
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("commit events of trigger %d: %w", row.ID, ctx.Err())
		case <-wake:
		case <-poll.C:
		}
		poll.Reset(streamPoll)
	}
}

// appendOnce appends payloads to row's stream, whose next envelope gets
// index next, through outages of the database. An append whose outcome
// was lost with the connection may have committed: before trying again it
// reads the stream's head and leaves out the payloads that landed (only
// this trigger appends to its stream: the hold fences others out), so a
// retry never appends an event twice. It returns how many of payloads
// (from the first) are appended; fewer than all when the stream is full.
func (t *Triggerer) appendOnce(ctx context.Context, row *core.Trigger, next *int64, payloads []json.RawMessage) (accepted int, err error) {
	lost := false
	err = untilCommitted(ctx, t.Logger.With("trigger_id", row.ID), "commit the stream's events", func() error {
		if lost {
			head, err := t.Store.StreamGet(ctx, row.StreamID)
			if err != nil {
				return err
			}
			landed := int(min(head.NextIndex-*next, int64(len(payloads)-accepted)))
			accepted, *next, lost = accepted+landed, head.NextIndex, false
			if accepted == len(payloads) {
				return nil
			}
		}
		res, err := t.Service.AppendTriggerEvents(ctx, row.ID, t.id, row.StreamID, payloads[accepted:])
		if err == nil {
			accepted, *next = accepted+res.Accepted, res.Stream.NextIndex
		}
		lost = errors.Is(err, core.ErrUnavailable)
		return err
	})
	return accepted, err
}

// unstart forgets trigger id as if it never started, so that the next
// reconcile starts it again.
func (t *Triggerer) unstart(stop context.CancelFunc, id int64) {
	stop()
	t.mu.Lock()
	delete(t.running, id)
	t.mu.Unlock()
}

// cleanStreams deletes consumed events past the retention.
func (t *Triggerer) cleanStreams(ctx context.Context) {
	if n, err := t.Service.CleanStreams(ctx, t.Config.StreamRetention); err != nil && ctx.Err() == nil {
		t.Logger.Warn("delete consumed stream events", "err", err)
	} else if n > 0 {
		t.Logger.Info("consumed stream events deleted", "count", n, "retention", t.Config.StreamRetention)
	}
}

// closeUnbuilt closes the stream of a trigger that cannot be built (its
// type is no longer registered), naming why.
func (t *Triggerer) closeUnbuilt(ctx context.Context, log *slog.Logger, row *core.Trigger, cause error) {
	msg := fmt.Sprintf("the trigger cannot be built: %v", cause)
	log.Warn("stream trigger failed", "reason", msg)
	t.failed(row.Type)
	if err := t.Service.CloseTriggerStream(ctx, row.ID, t.id, row.StreamID, msg); err != nil && ctx.Err() == nil && !errors.Is(err, core.ErrConflict) {
		log.Warn("close the trigger's stream", "err", err)
	}
}
