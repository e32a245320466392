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

// TestTaskExpansion: GET .../taskInstances/{task}/expansion shows a task
// mapped over a stream as expanding: items so far, instances so far, open
// or closed; a task without iterate is 400 naming it, an unknown one 404.
func TestTaskExpansion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	e.syncDag(core.DAG{DagID: "lazy", Tasks: []core.Task{
		{TaskID: "fetch", Operator: "sensor", StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "command", Kwargs: json.RawMessage(`{"command":"true"}`)}}},
		{TaskID: "insert", Operator: "noop", Iterate: "fetch"},
	}})
	var run core.DagRun
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/lazy/dagRuns", map[string]any{"dag_run_id": "r1"}, &run)
	path := "/api/v2/dags/lazy/dagRuns/r1/taskInstances/insert/expansion"
	var got struct {
		Iterate   string `json:"iterate"`
		StreamID  string `json:"stream_id"`
		Items     int64  `json:"items"`
		Instances int    `json:"instances"`
		Open      bool   `json:"open"`
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &got)
	if got.Iterate != "fetch" || got.Items != 0 || got.Instances != 0 || !got.Open {
		t.Fatalf("before the stream opened: %+v, want fetch, nothing so far, open", got)
	}
	tis, err := e.st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagID: "lazy", RunID: "r1", TaskID: "fetch"})
	if err != nil || len(tis) != 1 {
		t.Fatalf("fetch: %v %v", tis, err)
	}
	sid := got.StreamID
	if _, err := e.st.TaskInstanceDefer(ctx, &store.TaskInstanceDeferParams{ID: tis[0].ID, From: []core.TIState{core.TINone},
		Trigger: core.TriggerSpec{Type: "command"}, StreamID: sid, MaxPending: 10, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.StreamAppend(ctx, &store.StreamAppendParams{StreamID: sid, Payloads: []json.RawMessage{[]byte(`1`), []byte(`2`), []byte(`3`)}, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.TaskInstanceIterate(ctx, &store.TaskInstanceIterateParams{DagRunID: tis[0].DagRunID, TaskID: "insert", StreamID: sid,
		Instances: []store.NewTaskInstance{{ID: "00000000-0000-0000-0000-0000000000a1", TaskID: "insert", MapIndex: 0, MaxTries: 1,
			Queue: core.DefaultQueue, Pool: core.DefaultPool, PoolSlots: 1, Operator: "noop"}}, From: 0, Through: 0, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &got)
	if got.Items != 3 || got.Instances != 1 || !got.Open {
		t.Fatalf("mid-stream: %+v, want 3 items, 1 instance, open", got)
	}
	if _, err := e.st.StreamClose(ctx, &store.StreamCloseParams{StreamID: sid, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &got)
	if got.Items != 3 || got.Open {
		t.Fatalf("closed: %+v, want 3 items, closed", got)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/dags/lazy/dagRuns/r1/taskInstances/fetch/expansion", nil,
		`task "fetch" does not iterate over a stream`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/lazy/dagRuns/r1/taskInstances/nope/expansion", nil, "nope")
}
