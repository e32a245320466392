package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TaskInstanceCollection is a page of task instances (or of one's tries).
type TaskInstanceCollection struct {
	TaskInstances []TaskInstanceResponse `json:"task_instances"`
	TotalEntries  int                    `json:"total_entries"`
}

// TaskInstanceResponse is a task instance as Airflow 3's REST API shows it:
// the try's fields and the ones Airflow's clients require, null where
// Weir keeps nothing (no notes, executors or triggerer jobs).
type TaskInstanceResponse struct {
	core.TaskInstance
	LogicalDate      *time.Time          `json:"logical_date" doc:"its run's logical date"`
	RunAfter         time.Time           `json:"run_after" doc:"its run's run_after"`
	Duration         *float64            `json:"duration" doc:"seconds from start to end; null until it ends"`
	TaskDisplayName  string              `json:"task_display_name"`
	DagDisplayName   string              `json:"dag_display_name"`
	OperatorName     string              `json:"operator_name"`
	QueuedWhen       *time.Time          `json:"queued_when" doc:"Airflow 3's name of queued_dttm"`
	ScheduledWhen    *time.Time          `json:"scheduled_when" doc:"always null: Weir keeps no scheduling time"`
	Unixname         *string             `json:"unixname" doc:"always null"`
	Executor         *string             `json:"executor" doc:"always null: Weir has one kind of worker"`
	ExecutorConfig   string              `json:"executor_config" doc:"always {}"`
	Note             *string             `json:"note" doc:"always null: Weir keeps no notes"`
	RenderedMapIndex *string             `json:"rendered_map_index" doc:"the map index as text; null for an unmapped task"`
	RenderedFields   map[string]any      `json:"rendered_fields" doc:"always {}: the task-instance page shows the rendered arguments"`
	TriggererJob     *struct{}           `json:"triggerer_job" doc:"always null"`
	DagVersion       *DagVersionResponse `json:"dag_version" doc:"the DAG version the try runs"`
}

// tiResponses are task instances as the REST API shows them
// (TaskInstanceResponse), deferred ones with their trigger, their runs and
// DAG versions read once each.
func (s *server) tiResponses(ctx context.Context, tis []core.TaskInstance) ([]TaskInstanceResponse, error) {
	s.withTriggers(ctx, tis)
	runs, err := s.runsOf(ctx, tis)
	if err != nil {
		return nil, err
	}
	versions := map[int64]*DagVersionResponse{}
	out := make([]TaskInstanceResponse, len(tis))
	for i := range tis {
		ti := &tis[i]
		run := runs[ti.DagRunID]
		if run == nil { // deleted meanwhile
			return nil, s.problem(ctx, fmt.Errorf("dag_id %q dag_run_id %q: %w", ti.DagID, ti.RunID, core.ErrNotFound))
		}
		v, ok := versions[ti.DagVersionID]
		if !ok && ti.DagVersionID != 0 {
			dv, err := s.svc.DagVersion(ctx, ti.DagVersionID)
			if err != nil {
				return nil, s.problem(ctx, err)
			}
			r := versionResponse(dv)
			v, versions[ti.DagVersionID] = &r, &r
		}
		r := TaskInstanceResponse{TaskInstance: *ti, LogicalDate: run.LogicalDate, RunAfter: run.QueuedAt,
			TaskDisplayName: ti.TaskID, DagDisplayName: ti.DagID, OperatorName: ti.Operator, QueuedWhen: ti.QueuedAt,
			ExecutorConfig: "{}", RenderedFields: map[string]any{}, DagVersion: v}
		if run.LogicalDate != nil {
			r.RunAfter = *run.LogicalDate
		}
		if ti.StartDate != nil && ti.EndDate != nil {
			d := ti.Duration().Seconds()
			r.Duration = &d
		}
		if ti.MapIndex >= 0 {
			mi := strconv.Itoa(ti.MapIndex)
			r.RenderedMapIndex = &mi
		}
		out[i] = r
	}
	return out, nil
}

// runsOf reads the runs of tis in one statement, by id.
func (s *server) runsOf(ctx context.Context, tis []core.TaskInstance) (map[int64]*core.DagRun, error) {
	out := map[int64]*core.DagRun{}
	var ids []int64
	for i := range tis {
		if _, seen := out[tis[i].DagRunID]; !seen {
			out[tis[i].DagRunID] = nil
			ids = append(ids, tis[i].DagRunID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := s.st.DagRunList(ctx, &store.DagRunListParams{IDs: ids, Page: store.Page{Limit: len(ids)}})
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("read the runs of %d task instances: %w", len(tis), err))
	}
	for i := range list {
		out[list[i].ID] = &list[i]
	}
	return out, nil
}

// TaskInstances are the tries responses show, as a client reads them back.
func TaskInstances(shown []TaskInstanceResponse) []core.TaskInstance {
	out := make([]core.TaskInstance, len(shown))
	for i := range shown {
		out[i] = shown[i].TaskInstance
	}
	return out
}

// tiCollection is a page of tis, total in all, as the REST API shows it.
func (s *server) tiCollection(ctx context.Context, tis []core.TaskInstance, total int) (*struct{ Body TaskInstanceCollection }, error) {
	out, err := s.tiResponses(ctx, tis)
	if err != nil {
		return nil, err
	}
	return &struct{ Body TaskInstanceCollection }{TaskInstanceCollection{TaskInstances: out, TotalEntries: total}}, nil
}

type listTIsInput struct {
	DagRunParam
	Page
	State    []string      `query:"state" doc:"only instances in these states (none, scheduled, queued, running, success, failed, up_for_retry, upstream_failed, skipped, removed, restarting, deferred)"`
	TaskID   string        `query:"task_id" doc:"only instances of this task"`
	MapIndex optional[int] `query:"map_index" doc:"only instances with this map index (-1: unmapped)"`
	Pool     []string      `query:"pool" doc:"only instances of these pools"`
	Queue    []string      `query:"queue" doc:"only instances of these queues"`
	Operator []string      `query:"operator" doc:"only instances of these operators (bash, http, sql, go, ...)"`
	StartGTE time.Time     `query:"start_date_gte" doc:"only tries that started at or after this time"`
	StartLTE time.Time     `query:"start_date_lte" doc:"only tries that started at or before this time"`
	EndGTE   time.Time     `query:"end_date_gte" doc:"only tries that ended at or after this time"`
	EndLTE   time.Time     `query:"end_date_lte" doc:"only tries that ended at or before this time"`
}

type listMappedInput struct {
	DagRunParam
	Page
	TaskID string   `path:"task_id" doc:"a mapped task's id"`
	State  []string `query:"state" doc:"only instances in these states"`
}

// TaskInstanceParam names a task instance: path ids and the map_index query.
type TaskInstanceParam struct {
	DagRunParam
	TaskID   string `path:"task_id" doc:"task id"`
	MapIndex int    `query:"map_index" default:"-1" minimum:"-1" doc:"map index; -1 for an unmapped task"`
}

type mappedTIInput struct {
	DagRunParam
	TaskID   string `path:"task_id" doc:"task id"`
	MapIndex int    `path:"map_index" minimum:"-1" doc:"map index"`
}

func (s *server) registerTaskInstances() {
	tags := []string{"Task Instance"}
	base := Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task_instances", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "List a run's task instances",
		Description: listDoc("Lists the current tries of a run's task instances; dag_run_id \"~\" lists those of every run of the DAG, "+
			"and dag_id \"~\" those of every DAG.", store.TaskInstanceOrder),
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listTaskInstances)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task_instance", Method: http.MethodGet, Path: base + "/{task_id}", Tags: tags,
		Summary: "Get a task instance", Errors: []int{http.StatusNotFound},
	}, s.getTaskInstance)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_mapped_task_instance", Method: http.MethodGet, Path: base + "/{task_id}/{map_index}", Tags: tags,
		Summary: "Get a mapped task instance", Errors: []int{http.StatusNotFound},
	}, s.getMappedTaskInstance)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_mapped_task_instances", Method: http.MethodGet, Path: base + "/{task_id}/listMapped", Tags: tags,
		Summary:     "List a mapped task's instances in a run",
		Description: listDoc("Lists the current tries of a mapped task's instances (map_index 0 and up); 404 for a task that is not mapped.", store.TaskInstanceOrder),
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listMappedTaskInstances)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task_instance_tries", Method: http.MethodGet, Path: base + "/{task_id}/tries", Tags: tags,
		Summary: "List a task instance's tries", Description: "Earlier tries oldest first, then the current try.",
		Errors: []int{http.StatusNotFound},
	}, s.getTaskInstanceTries)
}

func (s *server) listTaskInstances(ctx context.Context, in *listTIsInput) (*struct{ Body TaskInstanceCollection }, error) {
	states, err := parseTIStates(in.State)
	if err != nil {
		return nil, err
	}
	p := &store.TaskInstanceListParams{TaskID: in.TaskID, States: states, Page: in.store(), Pools: in.Pool, Queues: in.Queue,
		Operators: in.Operator, StartDate: timeRange(in.StartGTE, in.StartLTE), EndDate: timeRange(in.EndGTE, in.EndLTE)}
	if in.MapIndex.IsSet {
		p.MapIndex = &in.MapIndex.Value
	}
	switch {
	case in.DagID != AllDags && in.RunID != AllRuns:
		run, err := s.dagRun(ctx, in.DagID, in.RunID)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		p.DagRunID = run.ID
	case in.DagID != AllDags:
		if _, err := s.dag(ctx, in.DagID); err != nil {
			return nil, s.problem(ctx, err)
		}
		p.DagID = in.DagID
	case in.RunID != AllRuns:
		p.RunID = in.RunID
	}
	return s.taskInstancePage(ctx, p)
}

// taskInstancePage answers the page of task instances p selects, each
// deferred one with its trigger.
func (s *server) taskInstancePage(ctx context.Context, p *store.TaskInstanceListParams) (*struct{ Body TaskInstanceCollection }, error) {
	tis, total, err := listOf(ctx, s, p, s.st.TaskInstanceList, s.st.TaskInstanceCount)
	if err != nil {
		return nil, err
	}
	return s.tiCollection(ctx, tis, total)
}

func (s *server) listMappedTaskInstances(ctx context.Context, in *listMappedInput) (*struct{ Body TaskInstanceCollection }, error) {
	states, err := parseTIStates(in.State)
	if err != nil {
		return nil, err
	}
	run, err := s.dagRun(ctx, in.DagID, in.RunID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	page, err := s.taskInstancePage(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskID: in.TaskID, Mapped: true,
		States: states, Page: in.store()})
	if err != nil || page.Body.TotalEntries > 0 || len(states) > 0 {
		return page, err
	}
	if _, err := s.taskInstance(ctx, in.DagID, in.RunID, in.TaskID, core.NoMapIndex); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, s.problem(ctx, fmt.Errorf("task_id %q in dag_run_id %q is not mapped: %w", in.TaskID, in.RunID, core.ErrNotFound))
}

// parseTIStates validates a task-instance state filter; "none" is the empty state.
func parseTIStates(raw []string) ([]core.TIState, error) {
	var out []core.TIState
	for _, r := range raw {
		for _, v := range strings.Split(r, ",") {
			st, err := parseTIState("query parameter state", v)
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// parseTIState reads one state name; field names the input for the error.
func parseTIState(field, v string) (core.TIState, error) {
	v = strings.TrimSpace(v)
	if v == "none" {
		return core.TINone, nil
	}
	st := core.TIState(v)
	if v == "" || !st.Valid() {
		names := make([]string, len(core.AllTIStates))
		for i, s := range core.AllTIStates {
			names[i] = s.String()
		}
		return "", invalid(fmt.Sprintf("%s: %q is not a task instance state; allowed: %s", field, v, strings.Join(names, ", ")))
	}
	return st, nil
}

func (s *server) getTaskInstance(ctx context.Context, in *TaskInstanceParam) (*struct{ Body TaskInstanceResponse }, error) {
	ti, err := s.taskInstance(ctx, in.DagID, in.RunID, in.TaskID, in.MapIndex)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	out, err := s.tiResponses(ctx, []core.TaskInstance{*ti})
	if err != nil {
		return nil, err
	}
	return &struct{ Body TaskInstanceResponse }{out[0]}, nil
}

func (s *server) getMappedTaskInstance(ctx context.Context, in *mappedTIInput) (*struct{ Body TaskInstanceResponse }, error) {
	return s.getTaskInstance(ctx, &TaskInstanceParam{DagRunParam: in.DagRunParam, TaskID: in.TaskID, MapIndex: in.MapIndex})
}

func (s *server) getTaskInstanceTries(ctx context.Context, in *TaskInstanceParam) (*struct{ Body TaskInstanceCollection }, error) {
	ti, err := s.taskInstance(ctx, in.DagID, in.RunID, in.TaskID, in.MapIndex)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	tries, err := s.st.TaskInstanceHistory(ctx, in.DagID, in.RunID, in.TaskID, in.MapIndex)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("tries of task_id %q in dag_id %q dag_run_id %q: %w", in.TaskID, in.DagID, in.RunID, err))
	}
	tries = append(tries, *ti)
	return s.tiCollection(ctx, tries, len(tries))
}

// taskInstance loads the current try of one task instance; a missing one is
// a not-found error naming every part of its key.
func (s *server) taskInstance(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error) {
	ti, err := s.st.TaskInstanceGetByKey(ctx, dagID, runID, taskID, mapIndex)
	if err != nil {
		return nil, fmt.Errorf("task instance dag_id %q dag_run_id %q task_id %q map_index %d: %w", dagID, runID, taskID, mapIndex, err)
	}
	return ti, nil
}
