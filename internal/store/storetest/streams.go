package storetest

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// payloads returns n JSON payloads {"i": from}, {"i": from+1}, ...
func payloads(from, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(`{"i":` + strconv.Itoa(from+i) + `}`)
	}
	return out
}

// streamEvents lists every envelope of stream id.
func (f *fixture) streamEvents(id string) []core.StreamEvent {
	f.t.Helper()
	evs, err := f.st.StreamEventList(f.ctx, &store.StreamEventListParams{StreamID: id, After: -1, Limit: 10000})
	must(f.t, err, "list events of "+id)
	return evs
}

// checkEnvelopes fails unless evs are sequence indexes 0..n-1 with
// payloads {"i": index}, only the last is_last when last.
func checkEnvelopes(t *testing.T, evs []core.StreamEvent, n int, last bool) {
	t.Helper()
	if len(evs) != n {
		t.Fatalf("%d envelopes, want %d", len(evs), n)
	}
	for i, e := range evs {
		want := `{"i":` + strconv.Itoa(i) + `}`
		if e.SequenceIndex != int64(i) || string(e.Payload) != want || e.IsLast != (last && i == n-1) {
			t.Fatalf("envelope %d = {seq %d, payload %s, is_last %v}, want {seq %d, payload %s, is_last %v}",
				i, e.SequenceIndex, e.Payload, e.IsLast, i, want, last && i == n-1)
		}
	}
}

func testStreamAppendBackpressure(t *testing.T, f *fixture) {
	st, err := f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: "s1", MaxPending: 3, Now: f.now})
	must(t, err, "create stream")
	if st.NextIndex != 0 || st.LastIndex() != -1 || st.Pending != 0 || st.Closed || st.TriggerID != 0 || !st.CreatedAt.Equal(f.now) {
		t.Fatalf("new stream = %+v, want empty, open, no trigger", st)
	}
	_, err = f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: "s1", MaxPending: 9, Now: f.now})
	wantErr(t, err, core.ErrConflict, "create a stream id twice")
	_, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "nope", Payloads: payloads(0, 1), Now: f.now})
	wantErr(t, err, core.ErrNotFound, "append to an unknown stream")

	// Only what max_pending leaves room for is appended.
	res, err := f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "s1", Payloads: payloads(0, 5), Last: true, Now: f.at(time.Second)})
	must(t, err, "append 5 with room for 3")
	if res.Accepted != 3 || res.Stream.NextIndex != 3 || res.Stream.Pending != 3 || res.Stream.Closed {
		t.Fatalf("append 5 with max_pending 3 = %d accepted, head %+v; want 3 accepted, 3 pending, open", res.Accepted, res.Stream)
	}
	res, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "s1", Payloads: payloads(3, 2), Last: true, Now: f.at(time.Second)})
	must(t, err, "append while full")
	if res.Accepted != 0 || res.Stream.Pending != 3 {
		t.Fatalf("append while full accepted %d (pending %d), want 0", res.Accepted, res.Stream.Pending)
	}
	checkEnvelopes(t, f.streamEvents("s1"), 3, false)

	// Consuming makes room; a range is consumed once.
	n, err := f.st.StreamConsume(f.ctx, &store.StreamConsumeParams{StreamID: "s1", From: 0, Through: 1, Now: f.at(2 * time.Second)})
	if err != nil || n != 2 {
		t.Fatalf("consume 0..1 = %d, %v; want 2", n, err)
	}
	n, err = f.st.StreamConsume(f.ctx, &store.StreamConsumeParams{StreamID: "s1", From: 0, Through: 1, Now: f.at(2 * time.Second)})
	if err != nil || n != 0 {
		t.Fatalf("consume 0..1 again = %d, %v; want 0", n, err)
	}
	pending, err := f.st.StreamEventList(f.ctx, &store.StreamEventListParams{StreamID: "s1", After: -1, Limit: 10, PendingOnly: true})
	if err != nil || len(pending) != 1 || pending[0].SequenceIndex != 2 || pending[0].ConsumedAt != nil {
		t.Fatalf("pending envelopes = %+v, %v; want only index 2", pending, err)
	}
	res, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "s1", Payloads: payloads(3, 2), Last: true, Now: f.at(3 * time.Second)})
	must(t, err, "append the rest")
	if res.Accepted != 2 || !res.Stream.Closed || res.Stream.LastIndex() != 4 || res.Stream.Pending != 3 {
		t.Fatalf("last append = %d accepted, head %+v; want 2, closed at index 4, 3 pending", res.Accepted, res.Stream)
	}
	evs := f.streamEvents("s1")
	checkEnvelopes(t, evs, 5, true)
	if evs[0].ConsumedAt == nil || !evs[0].ConsumedAt.Equal(f.at(2*time.Second)) || evs[2].ConsumedAt != nil {
		t.Errorf("consumed times = %v, %v; want 0 consumed at +2s, 2 pending", evs[0].ConsumedAt, evs[2].ConsumedAt)
	}
	// A consumer whose clock lags the appender's consumes no event before
	// it was created: consumed_at is then created_at.
	_, err = f.st.StreamConsume(f.ctx, &store.StreamConsumeParams{StreamID: "s1", From: 3, Through: 3, Now: f.at(time.Second)})
	must(t, err, "consume 3 with a lagging clock")
	if evs := f.streamEvents("s1"); evs[3].ConsumedAt == nil || evs[3].ConsumedAt.Before(evs[3].CreatedAt) {
		t.Errorf("event 3 created %v, consumed %v: want consumed no earlier", evs[3].CreatedAt, evs[3].ConsumedAt)
	}
	page, err := f.st.StreamEventList(f.ctx, &store.StreamEventListParams{StreamID: "s1", After: 1, Limit: 2})
	if err != nil || len(page) != 2 || page[0].SequenceIndex != 2 || page[1].SequenceIndex != 3 {
		t.Errorf("page after 1, limit 2 = %+v, %v; want 2 and 3", page, err)
	}

	// Nothing is appended to a closed stream.
	_, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "s1", Payloads: payloads(5, 1), Now: f.at(4 * time.Second)})
	wantErr(t, err, core.ErrConflict, "append after is_last")
	checkEnvelopes(t, f.streamEvents("s1"), 5, true)
	_, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "s1", Now: f.now})
	wantErr(t, err, core.ErrInvalid, "append nothing")

	// Large batches go in several statements, in order.
	_, err = f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: "big", MaxPending: 5000, Now: f.now})
	must(t, err, "create big")
	res, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "big", Payloads: payloads(0, 1234), Last: true, Now: f.now})
	if err != nil || res.Accepted != 1234 || !res.Stream.Closed {
		t.Fatalf("append 1234 = %+v, %v", res, err)
	}
	checkEnvelopes(t, f.streamEvents("big"), 1234, true)
}

func testStreamTriggerClose(t *testing.T, f *fixture) {
	spec := core.TriggerSpec{Type: "pages", Kwargs: json.RawMessage(`{"n":3}`)}
	st, err := f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: "run-1", MaxPending: 10, Trigger: spec, Now: f.now})
	must(t, err, "create stream with trigger")
	if st.TriggerID == 0 {
		t.Fatalf("stream %+v has no trigger", st)
	}
	tr, err := f.st.TriggerGet(f.ctx, st.TriggerID)
	must(t, err, "get the stream's trigger")
	if tr.StreamID != "run-1" || tr.Type != "pages" || string(tr.Kwargs) != `{"n":3}` || tr.TriggererID != "" {
		t.Fatalf("trigger = %+v, want an unassigned pages trigger of stream run-1", tr)
	}
	claimed, err := f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "tr1", AliveSince: f.now, Limit: 5})
	if err != nil || len(claimed) != 1 || claimed[0].StreamID != "run-1" {
		t.Fatalf("claim = %+v, %v; want the stream's trigger, naming its stream", claimed, err)
	}
	// No try waits on it, but its stream is open: it stays.
	if n, err := f.st.TriggerDeleteUnused(f.ctx); err != nil || n != 0 {
		t.Fatalf("delete unused while the stream is open = %d, %v; want 0", n, err)
	}
	_, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: "run-1", Payloads: payloads(0, 2), Now: f.now})
	must(t, err, "append")

	closed, err := f.st.StreamClose(f.ctx, &store.StreamCloseParams{StreamID: "run-1", Now: f.at(time.Second)})
	must(t, err, "close")
	if !closed.Closed || closed.Error != "" || closed.LastIndex() != 1 {
		t.Fatalf("closed stream = %+v", closed)
	}
	checkEnvelopes(t, f.streamEvents("run-1"), 2, true)
	again, err := f.st.StreamClose(f.ctx, &store.StreamCloseParams{StreamID: "run-1", Error: "late", Now: f.at(2 * time.Second)})
	if err != nil || again.Error != "" || !again.UpdatedAt.Equal(f.at(time.Second)) {
		t.Fatalf("second close = %+v, %v; want the first close unchanged", again, err)
	}
	if n, err := f.st.TriggerDeleteUnused(f.ctx, st.TriggerID); err != nil || n != 1 {
		t.Fatalf("delete unused once closed = %d, %v; want 1", n, err)
	}
	if got, err := f.st.StreamGet(f.ctx, "run-1"); err != nil || got.TriggerID != 0 || !got.Closed {
		t.Fatalf("stream after its trigger went = %+v, %v", got, err)
	}

	// A failed producer closes its stream with the reason; an empty one
	// has no envelope to mark.
	_, err = f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: "run-2", MaxPending: 10, Now: f.now})
	must(t, err, "create run-2")
	failed, err := f.st.StreamClose(f.ctx, &store.StreamCloseParams{StreamID: "run-2", Error: "page 3: 500", Now: f.now})
	if err != nil || !failed.Closed || failed.Error != "page 3: 500" || failed.NextIndex != 0 {
		t.Fatalf("failed close = %+v, %v", failed, err)
	}
	_, err = f.st.StreamClose(f.ctx, &store.StreamCloseParams{StreamID: "nope", Now: f.now})
	wantErr(t, err, core.ErrNotFound, "close an unknown stream")
}

func testStreamCleanup(t *testing.T, f *fixture) {
	for _, id := range []string{"done", "open"} {
		_, err := f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: id, MaxPending: 10, Now: f.now})
		must(t, err, "create "+id)
		_, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: id, Payloads: payloads(0, 3), Last: id == "done", Now: f.now})
		must(t, err, "append to "+id)
	}
	_, err := f.st.StreamConsume(f.ctx, &store.StreamConsumeParams{StreamID: "done", From: 0, Through: 2, Now: f.at(time.Minute)})
	must(t, err, "consume done")
	_, err = f.st.StreamConsume(f.ctx, &store.StreamConsumeParams{StreamID: "open", From: 0, Through: 0, Now: f.at(time.Minute)})
	must(t, err, "consume open's first")

	// Nothing consumed before the cutoff yet.
	if n, err := f.st.StreamCleanup(f.ctx, f.at(time.Minute), 100); err != nil || n != 0 {
		t.Fatalf("cleanup before anything is old enough = %d, %v; want 0", n, err)
	}
	if n, err := f.st.StreamCleanup(f.ctx, f.at(time.Hour), 2); err != nil || n != 2 {
		t.Fatalf("cleanup with limit 2 = %d, %v; want 2", n, err)
	}
	if n, err := f.st.StreamCleanup(f.ctx, f.at(time.Hour), 100); err != nil || n != 2 {
		t.Fatalf("second cleanup = %d, %v; want the other 2", n, err)
	}
	_, err = f.st.StreamGet(f.ctx, "done")
	wantErr(t, err, core.ErrNotFound, "a closed, consumed, cleaned stream")
	open, err := f.st.StreamGet(f.ctx, "open")
	if err != nil || open.NextIndex != 3 || open.Pending != 2 {
		t.Fatalf("open stream after cleanup = %+v, %v; want its head kept (next index 3, 2 pending)", open, err)
	}
	evs := f.streamEvents("open")
	if len(evs) != 2 || evs[0].SequenceIndex != 1 {
		t.Fatalf("open stream's envelopes after cleanup = %+v, want the 2 pending ones", evs)
	}
}
