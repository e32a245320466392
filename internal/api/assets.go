package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/store"
)

// AssetCollection is a page of assets, by name.
type AssetCollection struct {
	Assets       []core.AssetModel `json:"assets"`
	TotalEntries int               `json:"total_entries"`
}

// AssetEventCollection is a page of asset events.
type AssetEventCollection struct {
	AssetEvents  []AssetEventResponse `json:"asset_events"`
	TotalEntries int                  `json:"total_entries"`
}

// Events is the collection's events without the runs they created.
func (c AssetEventCollection) Events() []core.AssetEvent {
	out := make([]core.AssetEvent, len(c.AssetEvents))
	for i := range c.AssetEvents {
		out[i] = c.AssetEvents[i].AssetEvent
	}
	return out
}

// AssetEventResponse is an asset event as Airflow 3's AssetEventResponse:
// the event and the runs it created (the runs that consumed it).
type AssetEventResponse struct {
	core.AssetEvent
	CreatedDagRuns []DagRunAssetReference `json:"created_dagruns"`
}

// DagRunAssetReference is a run an asset event created, as Airflow 3
// names its fields.
type DagRunAssetReference struct {
	RunID             string           `json:"run_id"`
	DagID             string           `json:"dag_id"`
	LogicalDate       *time.Time       `json:"logical_date"`
	StartDate         *time.Time       `json:"start_date"` // null until the run starts
	EndDate           *time.Time       `json:"end_date"`
	State             core.DagRunState `json:"state"`
	DataIntervalStart *time.Time       `json:"data_interval_start"`
	DataIntervalEnd   *time.Time       `json:"data_interval_end"`
}

// eventResponses answers events with the runs each created, read for the
// whole page in one query.
func (s *server) eventResponses(ctx context.Context, events []core.AssetEvent) ([]AssetEventResponse, error) {
	out := make([]AssetEventResponse, len(events))
	at := make(map[int64]*AssetEventResponse, len(events))
	ids := make([]int64, len(events))
	for i := range events {
		out[i] = AssetEventResponse{AssetEvent: events[i], CreatedDagRuns: []DagRunAssetReference{}}
		at[events[i].ID], ids[i] = &out[i], events[i].ID
	}
	runs, err := s.st.AssetEventRuns(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, x := range runs {
		r := &x.Run
		ev := at[x.EventID]
		ev.CreatedDagRuns = append(ev.CreatedDagRuns, DagRunAssetReference{RunID: r.RunID, DagID: r.DagID, LogicalDate: r.LogicalDate,
			StartDate: r.StartDate, EndDate: r.EndDate, State: r.State, DataIntervalStart: r.DataIntervalStart, DataIntervalEnd: r.DataIntervalEnd})
	}
	return out, nil
}

// QueuedEventCollection lists a DAG's unconsumed asset events per asset.
type QueuedEventCollection struct {
	QueuedEvents []QueuedEventResponse `json:"queued_events"`
	TotalEntries int                   `json:"total_entries"`
}

// QueuedEventResponse is an asset's unconsumed events for a DAG, with
// Airflow 3's QueuedEventResponse fields (dag_display_name is the DAG's
// id: Weir's DAGs have no other name).
type QueuedEventResponse struct {
	store.AssetQueueEntry
	DagDisplayName string `json:"dag_display_name"`
}

type listAssetsInput struct {
	Page
	NamePattern string `query:"name_pattern" doc:"only assets whose name contains this text (SQL LIKE wildcards % and _ allowed)"`
	URIPattern  string `query:"uri_pattern" doc:"only assets whose uri contains this text (SQL LIKE wildcards % and _ allowed)"`
	OnlyActive  bool   `query:"only_active" default:"true" doc:"only assets some active DAG defines"`
}

type assetInput struct {
	AssetID int64 `path:"asset_id" doc:"asset id"`
}

type listAssetEventsInput struct {
	Page
	Cursor
	AssetID      int64  `query:"asset_id" doc:"only events of this asset"`
	SourceDagID  string `query:"source_dag_id" doc:"only events produced by this DAG"`
	SourceRunID  string `query:"source_run_id" doc:"only events produced by this run"`
	SourceTaskID string `query:"source_task_id" doc:"only events produced by this task"`
	PartitionKey string `query:"partition_key" doc:"only events of this partition"`
	// Airflow's filters.
	SourceMapIndex optional[int] `query:"source_map_index" doc:"only events of tries of this map index (-1: unmapped, or from outside a try)"`
	NamePattern    string        `query:"name_pattern" doc:"only events of assets whose name contains this, ignoring case"`
	TimestampGTE   time.Time     `query:"timestamp_gte" doc:"only events recorded at or after this time"`
	TimestampLTE   time.Time     `query:"timestamp_lte" doc:"only events recorded at or before this time"`
}

type createAssetEventInput struct {
	Body AssetEventBody
}

// AssetEventBody is the body of POST /assets/events: an event of an asset
// from outside Weir.
type AssetEventBody struct {
	AssetID        int64           `json:"asset_id" doc:"the asset that was updated"`
	Extra          json.RawMessage `json:"extra,omitempty" doc:"a JSON object stored with the event (at most 16 KiB; values of secret-named keys are stored as ***)"`
	PartitionKey   *string         `json:"partition_key,omitempty" doc:"the partition the event is about"`
	PartitionDate  string          `json:"partition_date,omitempty" doc:"the partition's date, RFC 3339 with a zone offset; needs partition_key"`
	IdempotencyKey *string         `json:"idempotency_key,omitempty" doc:"names the one event this request creates (1 to 256 bytes of printable text): a repeat returns that event with duplicate true"`
}

// CreatedAssetEvent is the answer to POST /assets/events: the event (with
// the runs it created: none yet, unless a repeat returns an earlier one),
// and whether an earlier request with the same idempotency key created it.
type CreatedAssetEvent struct {
	AssetEventResponse
	Duplicate bool `json:"duplicate" doc:"true when an earlier request with the idempotency key created the event; nothing was created"`
}

func (s *server) registerAssets() {
	tags := []string{"Asset"}
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_assets", Method: http.MethodGet, Path: Prefix + "/assets", Tags: tags,
		Summary: "List assets", Description: listDoc("Lists assets; by default only those some active DAG defines.", store.AssetOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listAssets)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_events", Method: http.MethodGet, Path: Prefix + "/assets/events", Tags: tags,
		Summary: "List asset events",
		Description: listDoc("Lists asset events. after_id (ascending) or before_id (with order_by=-id) pages by keyset.",
			store.AssetEventOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listAssetEvents)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "create_asset_event", Method: http.MethodPost, Path: Prefix + "/assets/events", Tags: tags,
		Summary: "Create an asset event",
		Description: "Records that an asset was updated outside Weir, with the fields a running task may emit (docs/emission.md); " +
			"DAGs scheduled on it are queued as for a task's outlet. A repeated idempotency_key returns the first event with duplicate true.",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge},
	}, s.createAssetEvent)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset", Method: http.MethodGet, Path: Prefix + "/assets/{asset_id}", Tags: tags,
		Summary: "Get an asset", Description: "An asset with the DAGs scheduled on it and the tasks producing and consuming it.",
		Errors: []int{http.StatusNotFound},
	}, s.getAsset)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "materialize_asset", Method: http.MethodPost, Path: Prefix + "/assets/{asset_id}/materialize", Tags: tags,
		Summary: "Materialize an asset",
		Description: "Triggers a manual run of the one active DAG with a task that produces the asset (has it as outlet), as Airflow's " +
			"materialize: the whole DAG runs. 404 when no DAG produces it, 409 naming the DAGs when several do. Audited as a trigger.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, s.materializeAsset)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_upstream_asset_events", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamAssetEvents", Tags: []string{"DagRun"},
		Summary: "List the asset events that triggered a run", Description: listDoc("Lists the events the run consumed.", store.AssetEventOrder),
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.upstreamAssetEvents)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_asset_queued_events", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/assets/queuedEvents", Tags: tags,
		Summary: "List a DAG's queued asset events", Description: "Per asset the DAG is scheduled on, the events not yet consumed by a run.",
		Errors: []int{http.StatusNotFound},
	}, s.queuedAssetEvents)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_queued_events", Method: http.MethodGet, Path: Prefix + "/assets/{asset_id}/queuedEvents", Tags: tags,
		Summary: "List an asset's queued events", Description: "Per DAG scheduled on the asset, its events not yet consumed by a run.",
		Errors: []int{http.StatusNotFound},
	}, s.assetQueuedEvents)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_asset_queued_event", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/assets/{asset_id}/queuedEvents", Tags: tags,
		Summary: "Get a DAG's queued events of an asset", Description: "404 when none is queued.",
		Errors: []int{http.StatusNotFound},
	}, s.dagAssetQueuedEvent)
	deleted := func(id, path, what string) huma.Operation {
		return huma.Operation{OperationID: id, Method: http.MethodDelete, Path: Prefix + path, Tags: tags, DefaultStatus: http.StatusNoContent,
			Summary:     "Delete " + what,
			Description: "Removes the events not yet consumed by a run (those queued before `before`), so that they trigger nothing; 404 when none is queued. Audited.",
			Errors:      []int{http.StatusNotFound}}
	}
	register(s, core.RoleOp, deleted("delete_dag_asset_queued_events", "/dags/{dag_id}/assets/queuedEvents", "a DAG's queued asset events"),
		deleteQueued[*dagQueuedInput](s))
	register(s, core.RoleOp, deleted("delete_asset_queued_events", "/assets/{asset_id}/queuedEvents", "an asset's queued events"),
		deleteQueued[*assetQueuedInput](s))
	register(s, core.RoleOp, deleted("delete_dag_asset_queued_event", "/dags/{dag_id}/assets/{asset_id}/queuedEvents",
		"a DAG's queued events of an asset"), deleteQueued[*dagAssetQueuedInput](s))
}

func (s *server) listAssets(ctx context.Context, in *listAssetsInput) (*struct{ Body AssetCollection }, error) {
	p := &store.AssetListParams{NamePattern: likeContains(in.NamePattern), URIPattern: likeContains(in.URIPattern),
		Page: in.store()}
	if in.OnlyActive {
		p.Active = &in.OnlyActive
	}
	list, total, err := listOf(ctx, s, p, s.st.AssetList, s.st.AssetCount)
	if err != nil {
		return nil, err
	}
	return &struct{ Body AssetCollection }{AssetCollection{Assets: list, TotalEntries: total}}, nil
}

// likeContains turns a search text into a LIKE pattern matching it anywhere.
func likeContains(text string) string {
	if text == "" || strings.Contains(text, "%") {
		return text
	}
	return "%" + text + "%"
}

func (s *server) getAsset(ctx context.Context, in *assetInput) (*struct{ Body core.AssetModel }, error) {
	a, err := s.st.AssetGet(ctx, in.AssetID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.AssetModel }{*a}, nil
}

func (s *server) listAssetEvents(ctx context.Context, in *listAssetEventsInput) (*struct{ Body AssetEventCollection }, error) {
	p := &store.AssetEventListParams{AssetID: in.AssetID, SourceDagID: in.SourceDagID,
		SourceRunID: in.SourceRunID, SourceTaskID: in.SourceTaskID, PartitionKey: in.PartitionKey,
		AssetNameSearch: in.NamePattern, Timestamp: timeRange(in.TimestampGTE, in.TimestampLTE),
		Cursor: in.Cursor.store(), Page: in.Page.store()}
	if in.SourceMapIndex.IsSet {
		p.SourceMapIndex = &in.SourceMapIndex.Value
	}
	return s.eventPage(ctx, p)
}

// eventPage lists one page of asset events with its total.
func (s *server) eventPage(ctx context.Context, p *store.AssetEventListParams) (*struct{ Body AssetEventCollection }, error) {
	list, total, err := listOf(ctx, s, p, s.st.AssetEventList, s.st.AssetEventCount)
	if err != nil {
		return nil, err
	}
	events, err := s.eventResponses(ctx, list)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body AssetEventCollection }{AssetEventCollection{AssetEvents: events, TotalEntries: total}}, nil
}

func (s *server) createAssetEvent(ctx context.Context, in *createAssetEventInput) (*struct{ Body CreatedAssetEvent }, error) {
	b := &in.Body
	ev, dup, err := s.svc.CreateAssetEvent(ctx, actor(ctx), b.AssetID, emission.Request{Extra: b.Extra,
		PartitionKey: b.PartitionKey, PartitionDate: b.PartitionDate, IdempotencyKey: b.IdempotencyKey})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	events, err := s.eventResponses(ctx, []core.AssetEvent{*ev})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body CreatedAssetEvent }{CreatedAssetEvent{AssetEventResponse: events[0], Duplicate: dup}}, nil
}

func (s *server) materializeAsset(ctx context.Context, in *assetInput) (*struct{ Body DAGRunResponse }, error) {
	run, err := s.svc.MaterializeAsset(ctx, actor(ctx), in.AssetID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.runResponse(ctx, run)
}

type upstreamEventsInput struct {
	DagRunParam
	Page
}

func (s *server) upstreamAssetEvents(ctx context.Context, in *upstreamEventsInput) (*struct{ Body AssetEventCollection }, error) {
	run, err := s.st.DagRunGet(ctx, in.DagID, in.RunID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.eventPage(ctx, &store.AssetEventListParams{ConsumedByRunID: run.ID, Page: in.store()})
}

// The inputs selecting queued asset events: the path's DAG, asset or
// both, queued before Before when set.
type (
	dagQueuedInput struct {
		DagID  string    `path:"dag_id" doc:"DAG id"`
		Before time.Time `query:"before" doc:"only events queued before this time (RFC 3339)"`
	}
	assetQueuedInput struct {
		AssetID int64     `path:"asset_id" doc:"asset id"`
		Before  time.Time `query:"before" doc:"only events queued before this time (RFC 3339)"`
	}
	dagAssetQueuedInput struct {
		DagID   string    `path:"dag_id" doc:"DAG id"`
		AssetID int64     `path:"asset_id" doc:"asset id"`
		Before  time.Time `query:"before" doc:"only events queued before this time (RFC 3339)"`
	}
	queuedSelector interface {
		params() *store.AssetQueueParams
	}
)

func (in *dagQueuedInput) params() *store.AssetQueueParams {
	return &store.AssetQueueParams{DagID: in.DagID, Before: in.Before}
}

func (in *assetQueuedInput) params() *store.AssetQueueParams {
	return &store.AssetQueueParams{AssetID: in.AssetID, Before: in.Before}
}

func (in *dagAssetQueuedInput) params() *store.AssetQueueParams {
	return &store.AssetQueueParams{DagID: in.DagID, AssetID: in.AssetID, Before: in.Before}
}

func (s *server) queuedAssetEvents(ctx context.Context, in *dagQueuedInput) (*struct{ Body QueuedEventCollection }, error) {
	if _, err := s.st.DagGet(ctx, in.DagID); err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.queued(ctx, in.params())
}

func (s *server) assetQueuedEvents(ctx context.Context, in *assetQueuedInput) (*struct{ Body QueuedEventCollection }, error) {
	if _, err := s.st.AssetGet(ctx, in.AssetID); err != nil {
		return nil, s.problem(ctx, fmt.Errorf("asset_id %d: %w", in.AssetID, err))
	}
	return s.queued(ctx, in.params())
}

func (s *server) dagAssetQueuedEvent(ctx context.Context, in *dagAssetQueuedInput) (*struct{ Body QueuedEventResponse }, error) {
	page, err := s.queued(ctx, in.params())
	if err != nil {
		return nil, err
	}
	return &struct{ Body QueuedEventResponse }{page.Body.QueuedEvents[0]}, nil
}

// queued answers the queued entries p selects; none is a 404, as
// Airflow's.
func (s *server) queued(ctx context.Context, p *store.AssetQueueParams) (*struct{ Body QueuedEventCollection }, error) {
	q, err := s.st.AssetQueueFind(ctx, p)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	if len(q) == 0 {
		what := fmt.Sprintf("dag %q", p.DagID)
		switch {
		case p.DagID == "":
			what = fmt.Sprintf("asset %d", p.AssetID)
		case p.AssetID != 0:
			what += fmt.Sprintf(" of asset %d", p.AssetID)
		}
		return nil, s.problem(ctx, fmt.Errorf("no asset events are queued for %s: %w", what, core.ErrNotFound))
	}
	out := make([]QueuedEventResponse, len(q))
	for i := range q {
		out[i] = QueuedEventResponse{AssetQueueEntry: q[i], DagDisplayName: q[i].DagID}
	}
	return &struct{ Body QueuedEventCollection }{QueuedEventCollection{QueuedEvents: out, TotalEntries: len(out)}}, nil
}

// deleteQueued is the DELETE of the queued events an input of type I
// selects.
func deleteQueued[I queuedSelector](s *server) func(context.Context, I) (*struct{}, error) {
	return func(ctx context.Context, in I) (*struct{}, error) {
		if _, err := s.svc.ClearQueuedEvents(ctx, actor(ctx), *in.params()); err != nil {
			return nil, s.problem(ctx, err)
		}
		return nil, nil
	}
}
