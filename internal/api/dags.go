package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// DAGCollection is a page of DAGs.
type DAGCollection struct {
	Dags         []core.DagModel `json:"dags"`
	TotalEntries int             `json:"total_entries"`
}

// TaskResponse describes one task of a DAG's latest version.
type TaskResponse struct {
	TaskID            string   `json:"task_id"`
	Operator          string   `json:"operator"`
	UpstreamTaskIDs   []string `json:"upstream_task_ids"`
	DownstreamTaskIDs []string `json:"downstream_task_ids"`
	TriggerRule       string   `json:"trigger_rule"`
	Retries           int      `json:"retries"`
	RetryDelay        string   `json:"retry_delay,omitempty"`
	ExecutionTimeout  string   `json:"execution_timeout,omitempty"`
	Queue             string   `json:"queue"`
	Pool              string   `json:"pool"`
	PoolSlots         int      `json:"pool_slots"`
	PriorityWeight    int      `json:"priority_weight"`
	IsMapped          bool     `json:"is_mapped"`
}

// DAGDetails is a DAG with the tasks of its latest version.
type DAGDetails struct {
	core.DagModel
	Tasks []TaskResponse `json:"tasks"`
}

// DagListQuery is the DAGs list's query: its page and filters.
type DagListQuery struct {
	Page
	OnlyActive    bool           `query:"only_active" default:"true" doc:"only DAGs still defined in a DAG file"`
	ExcludeStale  optional[bool] `query:"exclude_stale" doc:"Airflow's name for only_active (when given, it wins)"`
	Paused        optional[bool] `query:"paused" doc:"only paused (true) or unpaused (false) DAGs"`
	DagIDPattern  string         `query:"dag_id_pattern" doc:"only DAGs whose id contains this, ignoring case (% and _ are taken literally, not as wildcards)"`
	Tags          []string       `query:"tags" doc:"only DAGs with one of these tags (tags_match_mode=all: every one), each matched exactly"`
	TagsMatchMode string         `query:"tags_match_mode" enum:"any,all" doc:"any (the default) or all of tags"`
}

// DagIDParam names a DAG in the path.
type DagIDParam struct {
	DagID string `path:"dag_id" doc:"DAG id"`
}

type listDagsInput struct{ DagListQuery }

type patchDagsInput struct {
	DagListQuery
	UpdateMask []string `query:"update_mask" doc:"is_paused, the one field a PATCH changes (as Airflow)"`
	Body       struct {
		IsPaused bool `json:"is_paused" required:"true"`
	}
}

type patchDagInput struct {
	DagIDParam
	Body struct {
		IsPaused bool `json:"is_paused" required:"true"`
	}
}

func (s *server) registerDags() {
	tags := []string{"DAG"}
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dags", Method: http.MethodGet, Path: Prefix + "/dags", Tags: tags, Summary: "List DAGs",
		Description: listDoc("Lists DAGs.", store.DagOrder), Errors: []int{http.StatusBadRequest},
	}, s.listDags)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}", Tags: tags,
		Summary: "Get a DAG", Description: "Returns the DAG with the tasks of its latest version.",
		Errors: []int{http.StatusNotFound},
	}, s.getDag)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "patch_dags", Method: http.MethodPatch, Path: Prefix + "/dags", Tags: tags,
		Summary:     "Pause or unpause the DAGs a filter selects",
		Description: "Sets is_paused on the page of DAGs GET /dags would list with the same query (its filters, limit and offset; dag_id_pattern \"~\" is every DAG), each audited, and answers them.",
		Errors:      []int{http.StatusBadRequest},
	}, s.patchDags)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_details", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/details", Tags: tags,
		Summary: "Get a DAG's details", Description: "The same as GET /dags/{dag_id}: the DAG with the tasks of its latest version.",
		Errors: []int{http.StatusNotFound},
	}, s.getDag)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "patch_dag", Method: http.MethodPatch, Path: Prefix + "/dags/{dag_id}", Tags: tags,
		Summary: "Pause or unpause a DAG", Errors: []int{http.StatusNotFound},
	}, s.patchDag)
}

func (s *server) listDags(ctx context.Context, in *listDagsInput) (*struct{ Body DAGCollection }, error) {
	dags, total, err := listOf(ctx, s, in.params(), s.st.DagList, s.st.DagCount)
	if err != nil {
		return nil, err
	}
	return &struct{ Body DAGCollection }{DAGCollection{Dags: dags, TotalEntries: total}}, nil
}

func (s *server) patchDags(ctx context.Context, in *patchDagsInput) (*struct{ Body DAGCollection }, error) {
	for _, f := range in.UpdateMask {
		if f != "is_paused" {
			return nil, invalid(fmt.Sprintf("update_mask names %q; is_paused is the one field a PATCH of DAGs changes", f))
		}
	}
	if in.DagIDPattern == AllDags {
		in.DagIDPattern = ""
	}
	dags, total, err := listOf(ctx, s, in.params(), s.st.DagList, s.st.DagCount)
	if err != nil {
		return nil, err
	}
	for i := range dags {
		d, err := s.svc.SetDagPaused(ctx, actor(ctx), dags[i].DagID, in.Body.IsPaused)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		dags[i] = *d
	}
	return &struct{ Body DAGCollection }{DAGCollection{Dags: dags, TotalEntries: total}}, nil
}

// params are the store's filters of the DAGs list's query.
func (in *DagListQuery) params() *store.DagListParams {
	p := &store.DagListParams{OnlyActive: in.OnlyActive, Search: in.DagIDPattern, Tags: in.Tags, AllTags: in.TagsMatchMode == "all",
		Page: in.store()}
	if in.ExcludeStale.IsSet {
		p.OnlyActive = in.ExcludeStale.Value
	}
	if in.Paused.IsSet {
		p.Paused = &in.Paused.Value
	}
	return p
}

func (s *server) getDag(ctx context.Context, in *DagIDParam) (*struct{ Body DAGDetails }, error) {
	d, err := s.dagDetails(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body DAGDetails }{*d}, nil
}

func (s *server) patchDag(ctx context.Context, in *patchDagInput) (*struct{ Body DAGDetails }, error) {
	if _, err := s.svc.SetDagPaused(ctx, actor(ctx), in.DagID, in.Body.IsPaused); err != nil {
		return nil, s.problem(ctx, err)
	}
	d, err := s.dagDetails(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body DAGDetails }{*d}, nil
}

// dag loads a DAG row; a missing DAG is a not-found error naming its id.
func (s *server) dag(ctx context.Context, dagID string) (*core.DagModel, error) {
	d, err := s.st.DagGet(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	return d, nil
}

// dagDetails loads a DAG and the tasks of its latest version.
func (s *server) dagDetails(ctx context.Context, dagID string) (*DAGDetails, error) {
	d, err := s.dag(ctx, dagID)
	if err != nil {
		return nil, err
	}
	v, err := s.st.DagVersionLatest(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("latest version of dag_id %q: %w", dagID, err)
	}
	return &DAGDetails{DagModel: *d, Tasks: TaskResponses(&v.Spec)}, nil
}

// taskResponse describes a task, applying the defaults the engine applies.
func taskResponse(t core.Task, downstream []string) TaskResponse {
	r := TaskResponse{
		TaskID: t.TaskID, Operator: t.Operator, Retries: t.Retries,
		UpstreamTaskIDs: nonNil(t.DependsOn), DownstreamTaskIDs: nonNil(downstream),
		TriggerRule: string(t.TriggerRule), Queue: t.Queue, Pool: t.Pool, PoolSlots: t.PoolSlots,
		PriorityWeight: t.PriorityWeight, IsMapped: t.HasMapIndexes(),
	}
	if r.TriggerRule == "" {
		r.TriggerRule = string(core.AllSuccess)
	}
	if r.Queue == "" {
		r.Queue = core.DefaultQueue
	}
	if r.Pool == "" {
		r.Pool = core.DefaultPool
	}
	if r.PoolSlots == 0 {
		r.PoolSlots = 1
	}
	if t.RetryDelay != 0 {
		r.RetryDelay = t.RetryDelay.D().String()
	}
	if t.ExecutionTimeout != 0 {
		r.ExecutionTimeout = t.ExecutionTimeout.D().String()
	}
	return r
}

// nonNil returns s, or an empty slice so JSON shows [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// TaskResponses describes the tasks of d as GET /dags/{dag_id} does, with
// the engine's defaults applied (the CLI's local transport prints the same).
func TaskResponses(d *core.DAG) []TaskResponse {
	down := d.Downstream()
	out := make([]TaskResponse, 0, len(d.Tasks))
	for _, t := range d.Tasks {
		out = append(out, taskResponse(t, down[t.TaskID]))
	}
	return out
}
