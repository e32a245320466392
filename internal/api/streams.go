package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// StreamEventPage is a page of a stream's envelopes in sequence order.
type StreamEventPage struct {
	Events []core.StreamEvent `json:"events"`
	// NextAfter is the after value of the next page (the last sequence
	// index of this one); -1 when this page is empty.
	NextAfter int64 `json:"next_after"`
}

type streamInput struct {
	StreamID string `path:"stream_id" doc:"the stream (trigger run) id"`
}

type streamEventsInput struct {
	StreamID string `path:"stream_id" doc:"the stream (trigger run) id"`
	After    int64  `query:"after" default:"-1" minimum:"-1" doc:"list the envelopes after this sequence index (-1: from the first)"`
	Limit    int    `query:"limit" default:"100" minimum:"1" maximum:"1000" doc:"at most this many envelopes"`
	Pending  bool   `query:"pending" doc:"only the envelopes not consumed yet"`
}

// registerStreams serves a stream's head and its envelopes
// (docs/streaming.md).
func (s *server) registerStreams() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_stream", Method: http.MethodGet, Path: Prefix + "/streams/{stream_id}", Tags: []string{"Stream"},
		Summary: "Get a stream",
		Description: "Returns a stream's head: how many events it holds so far (next_index), how many are pending " +
			"(persisted, not consumed) against its max_pending, whether it is closed, why its producer failed, and " +
			"its trigger (0 once closed).",
		Errors: []int{http.StatusNotFound},
	}, s.getStream)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "list_stream_events", Method: http.MethodGet, Path: Prefix + "/streams/{stream_id}/events", Tags: []string{"Stream"},
		Summary: "List a stream's events",
		Description: "Lists a stream's envelopes (sequence_index, payload, is_last, created_at, consumed_at) in sequence " +
			"order, paged by sequence index: pass the page's next_after as after for the next one. Consumed envelopes " +
			"are deleted after [triggerer] stream_retention.",
		Errors: []int{http.StatusNotFound},
	}, s.listStreamEvents)
	expansion := huma.Operation{OperationID: "get_task_expansion", Method: http.MethodGet, Tags: []string{"Stream"},
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/expansion"}
	expansion.Summary = "Get a lazily expanding task's expansion"
	expansion.Description = "For a task mapped over a stream (iterate): its producer, the stream, how many items it sent " +
		"so far, how many mapped instances exist, and whether the expansion is still open (more items may come). A task " +
		"without iterate is 400."
	expansion.Errors = []int{http.StatusBadRequest, http.StatusNotFound}
	register(s, core.RoleViewer, expansion, s.getExpansion)
}

type expansionInput struct {
	DagID  string `path:"dag_id"`
	RunID  string `path:"dag_run_id"`
	TaskID string `path:"task_id"`
}

func (s *server) getExpansion(ctx context.Context, in *expansionInput) (*struct{ Body service.Expansion }, error) {
	e, err := s.svc.Expansion(ctx, in.DagID, in.RunID, in.TaskID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body service.Expansion }{*e}, nil
}

func (s *server) getStream(ctx context.Context, in *streamInput) (*struct{ Body core.Stream }, error) {
	st, err := s.st.StreamGet(ctx, in.StreamID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.Stream }{*st}, nil
}

func (s *server) listStreamEvents(ctx context.Context, in *streamEventsInput) (*struct{ Body StreamEventPage }, error) {
	if _, err := s.st.StreamGet(ctx, in.StreamID); err != nil {
		return nil, s.problem(ctx, err)
	}
	evs, err := s.st.StreamEventList(ctx, &store.StreamEventListParams{StreamID: in.StreamID, After: in.After,
		Limit: in.Limit, PendingOnly: in.Pending})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	page := StreamEventPage{Events: evs, NextAfter: -1}
	if len(evs) > 0 {
		page.NextAfter = evs[len(evs)-1].SequenceIndex
	}
	if page.Events == nil {
		page.Events = []core.StreamEvent{}
	}
	return &struct{ Body StreamEventPage }{page}, nil
}
