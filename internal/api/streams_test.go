package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestStreamAndItsEvents: GET /streams/{id} shows a stream's head (count
// so far, pending, open or closed), GET /streams/{id}/events its
// envelopes in order, paged by sequence index; an unknown stream is 404.
func TestStreamAndItsEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.st.StreamCreate(ctx, &store.StreamCreateParams{ID: "pages/run-1", MaxPending: 10, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	pl := []json.RawMessage{json.RawMessage(`{"page":1}`), json.RawMessage(`{"page":2}`), json.RawMessage(`{"page":3}`)}
	if _, err := e.st.StreamAppend(ctx, &store.StreamAppendParams{StreamID: "pages/run-1", Payloads: pl, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.StreamConsume(ctx, &store.StreamConsumeParams{StreamID: "pages/run-1", From: 0, Through: 0, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	var st core.Stream
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/streams/pages%2Frun-1", nil, &st)
	if st.ID != "pages/run-1" || st.NextIndex != 3 || st.Pending != 2 || st.MaxPending != 10 || st.Closed {
		t.Fatalf("stream = %+v, want 3 events so far, 2 pending of 10, open", st)
	}
	var page api.StreamEventPage
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/streams/pages%2Frun-1/events?limit=2", nil, &page)
	if len(page.Events) != 2 || page.Events[0].SequenceIndex != 0 || string(page.Events[1].Payload) != `{"page":2}` ||
		page.Events[0].ConsumedAt == nil || page.NextAfter != 1 {
		t.Fatalf("first page = %+v, want events 0 (consumed) and 1, next after 1", page)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/streams/pages%2Frun-1/events?after=1&limit=2", nil, &page)
	if len(page.Events) != 1 || page.Events[0].SequenceIndex != 2 || page.NextAfter != 2 {
		t.Fatalf("second page = %+v, want event 2", page)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/streams/pages%2Frun-1/events?pending=true", nil, &page)
	if len(page.Events) != 2 || page.Events[0].SequenceIndex != 1 {
		t.Fatalf("pending = %+v, want events 1 and 2", page)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/streams/nope", nil, "nope")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/streams/nope/events", nil, "nope")
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleViewer, "GET", "/api/v2/streams/pages%2Frun-1/events?limit=5000", nil, "limit")
}
