package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// DAGCollection is a page of DAGs.
type DAGCollection struct {
	Dags         []DAGResponse `json:"dags"`
	TotalEntries int           `json:"total_entries"`
}

// DAGResponse is a DAG as Airflow 3's REST API shows it: the DAG's fields,
// its latest version's limits, and the ones Airflow's clients require,
// null where Weir keeps nothing (no bundles, no expiry).
type DAGResponse struct {
	core.DagModel
	Tags                        []DagTag   `json:"tags" doc:"Airflow's tag objects ({name, dag_id})"`
	DagDisplayName              string     `json:"dag_display_name"`
	IsStale                     bool       `json:"is_stale" doc:"no DAG file defines it any more (not is_active)"`
	LastExpired                 *time.Time `json:"last_expired" doc:"always null"`
	BundleName                  *string    `json:"bundle_name" doc:"always null: Weir has no DAG bundles"`
	BundleVersion               *string    `json:"bundle_version" doc:"always null"`
	RelativeFileloc             string     `json:"relative_fileloc" doc:"the file's path in the DAG folder"`
	FileToken                   string     `json:"file_token" doc:"the DAG id: GET /dagSources/{dag_id} reads its file"`
	TimetableDescription        string     `json:"timetable_description"`
	MaxActiveTasks              int        `json:"max_active_tasks"`
	MaxActiveRuns               int        `json:"max_active_runs"`
	MaxConsecutiveFailedDagRuns int        `json:"max_consecutive_failed_dag_runs" doc:"always 0: Weir does not pause a DAG for failed runs"`
	HasTaskConcurrencyLimits    bool       `json:"has_task_concurrency_limits" doc:"always false: Weir has no per-task limits"`
	HasImportErrors             bool       `json:"has_import_errors" doc:"its file fails to load now (the DAG keeps its last good version)"`
	NextDagrunLogicalDate       *time.Time `json:"next_dagrun_logical_date"`
	NextDagrunDataIntervalStart *time.Time `json:"next_dagrun_data_interval_start"`
	NextDagrunDataIntervalEnd   *time.Time `json:"next_dagrun_data_interval_end"`
	Owners                      []string   `json:"owners" doc:"always empty: Weir's tasks have no owner"`
}

// DagTag is one of a DAG's tags, as Airflow shows it.
type DagTag struct {
	Name  string `json:"name"`
	DagID string `json:"dag_id"`
}

// Dag is the DAG a response shows, as a client reads it back.
func (r *DAGResponse) Dag() core.DagModel {
	d := r.DagModel
	d.Tags = make([]string, len(r.Tags))
	for i, t := range r.Tags {
		d.Tags[i] = t.Name
	}
	return d
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
	DAGResponse
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
	return s.dagCollection(ctx, dags, total)
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
	return s.dagCollection(ctx, dags, total)
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
	shown, err := s.dagResponses(ctx, []core.DagModel{*d})
	if err != nil {
		return nil, err
	}
	return &DAGDetails{DAGResponse: shown[0], Tasks: TaskResponses(&v.Spec)}, nil
}

// dagCollection is a page of dags, total in all, as the REST API shows it.
func (s *server) dagCollection(ctx context.Context, dags []core.DagModel, total int) (*struct{ Body DAGCollection }, error) {
	shown, err := s.dagResponses(ctx, dags)
	if err != nil {
		return nil, err
	}
	return &struct{ Body DAGCollection }{DAGCollection{Dags: shown, TotalEntries: total}}, nil
}

// dagResponses are DAGs as the REST API shows them (DAGResponse): each
// with its latest version's limits and its next scheduled run, and
// whether its file fails to load now.
func (s *server) dagResponses(ctx context.Context, dags []core.DagModel) ([]DAGResponse, error) {
	broken, err := s.brokenFiles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]DAGResponse, len(dags))
	for i := range dags {
		d := &dags[i]
		r := DAGResponse{DagModel: *d, Tags: make([]DagTag, len(d.Tags)), DagDisplayName: d.DagID, IsStale: !d.IsActive,
			RelativeFileloc: d.FileLoc, FileToken: d.DagID, TimetableDescription: d.Schedule, HasImportErrors: broken[d.FileLoc],
			MaxActiveTasks: service.DefaultMaxActiveTasks, MaxActiveRuns: scheduler.DefaultMaxActiveRuns, Owners: []string{}}
		for j, t := range d.Tags {
			r.Tags[j] = DagTag{Name: t, DagID: d.DagID}
		}
		if rel, err := filepath.Rel(s.cfg.DagsFolder, d.FileLoc); err == nil && s.cfg.DagsFolder != "" && !strings.HasPrefix(rel, "..") {
			r.RelativeFileloc = rel
		}
		if d.LatestVersion != 0 {
			v, err := s.svc.DagVersion(ctx, d.LatestVersion)
			if err != nil {
				return nil, s.problem(ctx, err)
			}
			r.MaxActiveTasks = cmp.Or(v.Spec.MaxActiveTasks, r.MaxActiveTasks)
			r.MaxActiveRuns = cmp.Or(v.Spec.MaxActiveRuns, r.MaxActiveRuns)
			next, err := s.svc.NextDataIntervalsOf(ctx, &v.Spec, 1)
			if err != nil {
				return nil, s.problem(ctx, err)
			}
			if len(next) == 1 {
				r.NextDagrunLogicalDate, r.NextDagrunDataIntervalStart, r.NextDagrunDataIntervalEnd = &next[0].Start, &next[0].Start, &next[0].End
			}
		}
		out[i] = r
	}
	return out, nil
}

// brokenFiles are the DAG files that fail to load now (the DAG processor's
// import errors).
func (s *server) brokenFiles(ctx context.Context) (map[string]bool, error) {
	errs, err := s.st.ImportErrorList(ctx, &store.ImportErrorListParams{Page: store.Page{Limit: MaxPageLimit}})
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("list import errors: %w", err))
	}
	out := make(map[string]bool, len(errs))
	for _, e := range errs {
		out[e.Filename] = true
	}
	return out, nil
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
