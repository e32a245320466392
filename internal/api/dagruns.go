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
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// AllDags is the dag_id that lists DAG runs (or task instances) of every
// DAG, as in Airflow.
const AllDags = "~"

// AllRuns is the dag_run_id that lists the task instances of every run.
const AllRuns = "~"

// DAGRunCollection is a page of DAG runs, newest first.
type DAGRunCollection struct {
	DagRuns      []DAGRunResponse `json:"dag_runs"`
	TotalEntries int              `json:"total_entries"`
}

// DAGRunResponse is a run as Airflow 3's REST API shows it: the run's
// fields and the ones Airflow's clients require, null where Weir keeps
// nothing (no notes, no scheduling-decision time, no bundles).
type DAGRunResponse struct {
	core.DagRun
	RunAfter               time.Time            `json:"run_after" doc:"when the run could start: its logical date, or when it was queued when it has none"`
	LastSchedulingDecision *time.Time           `json:"last_scheduling_decision" doc:"always null: Weir keeps none"`
	TriggeredBy            *string              `json:"triggered_by" doc:"timetable, asset, backfill or test; null for a manual run (Weir does not record through what)"`
	TriggeringUserName     *string              `json:"triggering_user_name" doc:"always null: the audit log says who"`
	Note                   *string              `json:"note" doc:"always null: Weir keeps no notes"`
	DagVersions            []DagVersionResponse `json:"dag_versions" doc:"the DAG version the run runs"`
	BundleVersion          *string              `json:"bundle_version" doc:"always null: Weir has no DAG bundles"`
	DagDisplayName         string               `json:"dag_display_name"`
	Duration               *float64             `json:"duration" doc:"seconds from start to end; null until it ends"`
}

// ClearResult lists the task instances a clear reset (or, with dry_run,
// would reset); after a real clear of a whole run it also holds the run.
type ClearResult struct {
	TaskInstances []TaskInstanceResponse `json:"task_instances"`
	TotalEntries  int                    `json:"total_entries"`
	DagRun        *DAGRunResponse        `json:"dag_run,omitempty"`
}

// triggeredBy is Airflow's triggered_by of a run of type t (test: a `weir
// dags test`'s), nil when Weir cannot tell.
func triggeredBy(run *core.DagRun) *string {
	by := map[core.RunType]string{core.RunScheduled: "timetable", core.RunAssetTriggered: "asset", core.RunBackfill: "backfill"}[run.RunType]
	if run.TestJobID != "" {
		by = "test"
	}
	if by == "" {
		return nil
	}
	return &by
}

// runResponses are runs as the REST API shows them (DAGRunResponse), their
// DAG versions read once each.
func (s *server) runResponses(ctx context.Context, runs []core.DagRun) ([]DAGRunResponse, error) {
	versions := map[int64]DagVersionResponse{}
	out := make([]DAGRunResponse, len(runs))
	for i := range runs {
		r := &runs[i]
		v, ok := versions[r.DagVersionID]
		if !ok {
			dv, err := s.svc.DagVersion(ctx, r.DagVersionID)
			if err != nil {
				return nil, s.problem(ctx, err)
			}
			v = versionResponse(dv)
			versions[r.DagVersionID] = v
		}
		resp := DAGRunResponse{DagRun: *r, RunAfter: r.QueuedAt, TriggeredBy: triggeredBy(r),
			DagVersions: []DagVersionResponse{v}, DagDisplayName: r.DagID}
		if r.LogicalDate != nil {
			resp.RunAfter = *r.LogicalDate
		}
		if r.StartDate != nil && r.EndDate != nil {
			d := r.EndDate.Sub(*r.StartDate).Seconds()
			resp.Duration = &d
		}
		out[i] = resp
	}
	return out, nil
}

// runResponse is runResponses of one run.
func (s *server) runResponse(ctx context.Context, run *core.DagRun) (*struct{ Body DAGRunResponse }, error) {
	out, err := s.runResponses(ctx, []core.DagRun{*run})
	if err != nil {
		return nil, err
	}
	return &struct{ Body DAGRunResponse }{out[0]}, nil
}

type listDagRunsInput struct {
	DagIDParam
	Page
	State          []string  `query:"state" doc:"only runs in these states (queued, running, success, failed)"`
	RunType        []string  `query:"run_type" doc:"only runs of these types (manual, scheduled, asset_triggered, backfill)"`
	LogicalDateGTE time.Time `query:"logical_date_gte" doc:"only runs whose logical date is at or after this time"`
	LogicalDateLTE time.Time `query:"logical_date_lte" doc:"only runs whose logical date is at or before this time"`
	StartDateGTE   time.Time `query:"start_date_gte" doc:"only runs that started at or after this time"`
	StartDateLTE   time.Time `query:"start_date_lte" doc:"only runs that started at or before this time"`
	EndDateGTE     time.Time `query:"end_date_gte" doc:"only runs that ended at or after this time"`
	EndDateLTE     time.Time `query:"end_date_lte" doc:"only runs that ended at or before this time"`
	RunAfterGTE    time.Time `query:"run_after_gte" doc:"only runs whose run_after (logical date, else when queued) is at or after this time"`
	RunAfterLTE    time.Time `query:"run_after_lte" doc:"only runs whose run_after is at or before this time"`
	RunIDPattern   string    `query:"run_id_pattern" doc:"only runs whose id contains this, ignoring case (% and _ are taken literally)"`
	BackfillID     int64     `query:"backfill_id" minimum:"0" doc:"only the runs of this backfill (Weir's addition)"`
}

// timeRange is a range of two query parameters (zero: unbounded).
func timeRange(gte, lte time.Time) store.TimeRange {
	var r store.TimeRange
	if !gte.IsZero() {
		r.GTE = &gte
	}
	if !lte.IsZero() {
		r.LTE = &lte
	}
	return r
}

// DagRunParam names a DAG run in the path.
type DagRunParam struct {
	DagIDParam
	RunID string `path:"dag_run_id" doc:"run id"`
}

type triggerInput struct {
	DagIDParam
	Body struct {
		DagRunID          string          `json:"dag_run_id,omitempty" doc:"run id; default manual__<logical date>"`
		LogicalDate       *time.Time      `json:"logical_date,omitempty" doc:"default now"`
		DataIntervalStart *time.Time      `json:"data_interval_start,omitempty" doc:"default (with data_interval_end unset): the interval the DAG's timetable gives a manual run at the logical date, as Airflow's infer_manual_data_interval (the day before for a @daily DAG); else the logical date"`
		DataIntervalEnd   *time.Time      `json:"data_interval_end,omitempty" doc:"default as data_interval_start's"`
		Conf              json.RawMessage `json:"conf,omitempty" doc:"a JSON object passed to the run's templates as params/conf"`
		PartitionKey      *string         `json:"partition_key,omitempty" doc:"the partition the run is for (1-256 printable bytes): templates' partition_key, WEIR_PARTITION_KEY"`
	}
}

type clearDagRunInput struct {
	DagRunParam
	Body struct {
		OnlyFailed    bool  `json:"only_failed,omitempty" doc:"clear only failed and upstream_failed task instances"`
		DryRun        *bool `json:"dry_run,omitempty" doc:"only report what would be cleared (default true, as in Airflow)"`
		KeepTaskState bool  `json:"keep_task_state,omitempty" doc:"keep the cleared instances' task state (by default a clear deletes it)"`
	}
}

type patchDagRunInput struct {
	DagRunParam
	Body struct {
		State string `json:"state" doc:"success or failed: marks the run and its task instances (Airflow's rule: docs/api.md)"`
	}
}

func (s *server) registerDagRuns() {
	tags := []string{"DagRun"}
	base := Prefix + "/dags/{dag_id}/dagRuns"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_runs", Method: http.MethodGet, Path: base, Tags: tags, Summary: "List DAG runs",
		Description: listDoc("Lists a DAG's runs; dag_id \"~\" lists the runs of every DAG.", store.DagRunOrder),
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listDagRuns)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "trigger_dag_run", Method: http.MethodPost, Path: base, Tags: tags, Summary: "Trigger a DAG run",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
	}, s.triggerDagRun)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_run", Method: http.MethodGet, Path: base + "/{dag_run_id}", Tags: tags,
		Summary: "Get a DAG run", Errors: []int{http.StatusNotFound},
	}, s.getDagRun)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "clear_dag_run", Method: http.MethodPost, Path: base + "/{dag_run_id}/clear", Tags: tags,
		Summary:     "Clear a DAG run",
		Description: "Starts a new try of the run's task instances (only failed ones with only_failed). With dry_run (the default) nothing changes and the response lists what would be cleared.",
		Errors:      []int{http.StatusNotFound},
	}, s.clearDagRun)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "patch_dag_run", Method: http.MethodPatch, Path: base + "/{dag_run_id}", Tags: tags,
		Summary:     "Mark a DAG run success or failed",
		Description: "Sets the run's state by hand. success marks every task instance success except the skipped and removed ones; failed marks the running ones failed and the unfinished ones skipped.",
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.patchDagRun)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "delete_dag_run", Method: http.MethodDelete, Path: base + "/{dag_run_id}", Tags: tags,
		Summary:       "Delete a DAG run",
		Description:   "Deletes the run and its history (task instances and their tries, XComs, task state); its logs stay. 409 while a task instance of it is queued, running or deferred. Audited.",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, func(ctx context.Context, in *DagRunParam) (*struct{}, error) {
		return nil, s.problemOrNil(ctx, s.svc.DeleteRun(ctx, actor(ctx), in.DagID, in.RunID))
	})
}

func (s *server) listDagRuns(ctx context.Context, in *listDagRunsInput) (*struct{ Body DAGRunCollection }, error) {
	states, err := parseRunStates(in.State)
	if err != nil {
		return nil, err
	}
	types, err := parseRunTypes(in.RunType)
	if err != nil {
		return nil, err
	}
	logical := timeRange(in.LogicalDateGTE, in.LogicalDateLTE)
	p := &store.DagRunListParams{States: states, RunTypes: types, BackfillID: in.BackfillID, Page: in.store(),
		LogicalDateGTE: logical.GTE, LogicalDateLTE: logical.LTE, StartDate: timeRange(in.StartDateGTE, in.StartDateLTE),
		EndDate: timeRange(in.EndDateGTE, in.EndDateLTE), RunAfter: timeRange(in.RunAfterGTE, in.RunAfterLTE), RunIDSearch: in.RunIDPattern}
	return s.dagRunsOf(ctx, in.DagID, p)
}

// dagRunsOf answers the page of p's runs of dagID ("~": of every DAG; an
// unknown DAG is a 404).
func (s *server) dagRunsOf(ctx context.Context, dagID string, p *store.DagRunListParams) (*struct{ Body DAGRunCollection }, error) {
	if dagID != AllDags {
		if _, err := s.dag(ctx, dagID); err != nil {
			return nil, s.problem(ctx, err)
		}
		p.DagID = dagID
	}
	list, total, err := listOf(ctx, s, p, s.st.DagRunList, s.st.DagRunCount)
	if err != nil {
		return nil, err
	}
	runs, err := s.runResponses(ctx, list)
	if err != nil {
		return nil, err
	}
	return &struct{ Body DAGRunCollection }{DAGRunCollection{DagRuns: runs, TotalEntries: total}}, nil
}

// parseRunStates validates the state filter ("a,b" or repeated).
func parseRunStates(raw []string) ([]core.DagRunState, error) {
	var out []core.DagRunState
	for _, r := range raw {
		for _, v := range strings.Split(r, ",") {
			st := core.DagRunState(strings.TrimSpace(v))
			if !st.Valid() {
				return nil, invalid(fmt.Sprintf("query parameter state: %q is not a DAG run state; allowed: queued, running, success, failed", v))
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// parseRunTypes validates the run_type filter ("a,b" or repeated).
func parseRunTypes(raw []string) ([]core.RunType, error) {
	var out []core.RunType
	for _, r := range raw {
		for _, v := range strings.Split(r, ",") {
			switch t := core.RunType(strings.TrimSpace(v)); t {
			case core.RunManual, core.RunScheduled, core.RunAssetTriggered, core.RunBackfill:
				out = append(out, t)
			default:
				return nil, invalid(fmt.Sprintf("query parameter run_type: %q is not a run type; allowed: manual, scheduled, asset_triggered, backfill", v))
			}
		}
	}
	return out, nil
}

func (s *server) triggerDagRun(ctx context.Context, in *triggerInput) (*struct{ Body DAGRunResponse }, error) {
	run, err := s.svc.TriggerRun(ctx, actor(ctx), runs.TriggerParams{
		DagID: in.DagID, RunID: in.Body.DagRunID, RunType: core.RunManual, Conf: in.Body.Conf,
		LogicalDate: in.Body.LogicalDate, DataIntervalStart: in.Body.DataIntervalStart, DataIntervalEnd: in.Body.DataIntervalEnd,
		PartitionKey: in.Body.PartitionKey,
	})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.runResponse(ctx, run)
}

func (s *server) getDagRun(ctx context.Context, in *DagRunParam) (*struct{ Body DAGRunResponse }, error) {
	run, err := s.dagRun(ctx, in.DagID, in.RunID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.runResponse(ctx, run)
}

func (s *server) clearDagRun(ctx context.Context, in *clearDagRunInput) (*struct{ Body ClearResult }, error) {
	dry := dryRun(in.Body.DryRun)
	tis, err := s.svc.Clear(ctx, actor(ctx), service.ClearParams{DagID: in.DagID, RunID: in.RunID,
		OnlyFailed: in.Body.OnlyFailed, KeepTaskState: in.Body.KeepTaskState, DryRun: dry})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	shown, err := s.tiResponses(ctx, tis)
	if err != nil {
		return nil, err
	}
	out := &struct{ Body ClearResult }{ClearResult{TaskInstances: shown, TotalEntries: len(tis)}}
	if !dry {
		run, err := s.dagRun(ctx, in.DagID, in.RunID)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		resp, err := s.runResponse(ctx, run)
		if err != nil {
			return nil, err
		}
		out.Body.DagRun = &resp.Body
	}
	return out, nil
}

func (s *server) patchDagRun(ctx context.Context, in *patchDagRunInput) (*struct{ Body DAGRunResponse }, error) {
	run, err := s.svc.MarkRun(ctx, actor(ctx), in.DagID, in.RunID, core.DagRunState(in.Body.State))
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.runResponse(ctx, run)
}

// dagRun loads a run; a missing one is a not-found error naming both ids.
func (s *server) dagRun(ctx context.Context, dagID, runID string) (*core.DagRun, error) {
	run, err := s.st.DagRunGet(ctx, dagID, runID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q dag_run_id %q: %w", dagID, runID, err)
	}
	return run, nil
}

// dryRun reads an optional dry_run flag, which defaults to true as in Airflow.
func dryRun(v *bool) bool { return v == nil || *v }
