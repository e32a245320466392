package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// BatchPage is the paging of Airflow's batch list bodies.
type BatchPage struct {
	PageOffset int    `json:"page_offset,omitempty" minimum:"0" doc:"number of entries to skip"`
	PageLimit  int    `json:"page_limit,omitempty" minimum:"0" doc:"maximum number of entries to return (default 100; more than 1000 returns 1000)"`
	OrderBy    string `json:"order_by,omitempty" doc:"field to order by, \"-\" first for descending (as the GET list's order_by)"`
}

// store returns the page as the store takes it.
func (p BatchPage) store() store.Page {
	limit := p.PageLimit
	if limit == 0 {
		limit = 100 // Airflow's default page_limit
	}
	return Page{Limit: limit, Offset: p.PageOffset, OrderBy: p.OrderBy}.store()
}

type listDagRunsBatchInput struct {
	DagIDParam
	Body struct {
		BatchPage
		DagIDs         []string   `json:"dag_ids,omitempty" doc:"only runs of these DAGs"`
		States         []string   `json:"states,omitempty" doc:"only runs in these states (queued, running, success, failed)"`
		LogicalDateGTE *time.Time `json:"logical_date_gte,omitempty" doc:"only runs whose logical date is at or after this time"`
		LogicalDateLTE *time.Time `json:"logical_date_lte,omitempty" doc:"only runs whose logical date is at or before this time"`
		StartDateGTE   *time.Time `json:"start_date_gte,omitempty" doc:"only runs that started at or after this time"`
		StartDateLTE   *time.Time `json:"start_date_lte,omitempty" doc:"only runs that started at or before this time"`
		EndDateGTE     *time.Time `json:"end_date_gte,omitempty" doc:"only runs that ended at or after this time"`
		EndDateLTE     *time.Time `json:"end_date_lte,omitempty" doc:"only runs that ended at or before this time"`
		RunAfterGTE    *time.Time `json:"run_after_gte,omitempty" doc:"only runs whose run_after is at or after this time"`
		RunAfterLTE    *time.Time `json:"run_after_lte,omitempty" doc:"only runs whose run_after is at or before this time"`
	}
}

type listTIsBatchInput struct {
	DagRunParam
	Body struct {
		BatchPage
		DagIDs    []string   `json:"dag_ids,omitempty" doc:"only instances of these DAGs"`
		DagRunIDs []string   `json:"dag_run_ids,omitempty" doc:"only instances of runs with these ids"`
		TaskIDs   []string   `json:"task_ids,omitempty" doc:"only instances of these tasks"`
		State     []string   `json:"state,omitempty" doc:"only instances in these states (none for the empty state)"`
		Pool      []string   `json:"pool,omitempty" doc:"only instances of these pools"`
		Queue     []string   `json:"queue,omitempty" doc:"only instances of these queues"`
		StartGTE  *time.Time `json:"start_date_gte,omitempty" doc:"only tries that started at or after this time"`
		StartLTE  *time.Time `json:"start_date_lte,omitempty" doc:"only tries that started at or before this time"`
		EndGTE    *time.Time `json:"end_date_gte,omitempty" doc:"only tries that ended at or after this time"`
		EndLTE    *time.Time `json:"end_date_lte,omitempty" doc:"only tries that ended at or before this time"`
	}
}

// registerBatchLists adds Airflow's batch lists, POST .../list with the
// filters in the body (a client sends more ids than a URL holds): of runs
// and of task instances, "~" in the path for every DAG and run.
func (s *server) registerBatchLists() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_list_dag_runs_batch", Method: http.MethodPost, Path: Prefix + "/dags/{dag_id}/dagRuns/list",
		Tags: []string{"DagRun"}, Summary: "List DAG runs, filtered by a body",
		Description: listDoc("Lists DAG runs as GET .../dagRuns does, with the filters in the body (Airflow's DAGRunsBatchBody); "+
			"dag_id \"~\" for every DAG.", store.DagRunOrder),
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listDagRunsBatch)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task_instances_batch", Method: http.MethodPost,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/list", Tags: []string{"Task Instance"},
		Summary: "List task instances, filtered by a body",
		Description: listDoc("Lists task instances as GET .../taskInstances does, with the filters in the body (Airflow's "+
			"TaskInstancesBatchBody); \"~\" in the path for every DAG and run.", store.TaskInstanceOrder),
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listTaskInstancesBatch)
}

func (s *server) listDagRunsBatch(ctx context.Context, in *listDagRunsBatchInput) (*struct{ Body DAGRunCollection }, error) {
	b := &in.Body
	states, err := parseRunStates(b.States)
	if err != nil {
		return nil, err
	}
	return s.dagRunsOf(ctx, in.DagID, &store.DagRunListParams{DagIDs: b.DagIDs, States: states, LogicalDateGTE: b.LogicalDateGTE,
		LogicalDateLTE: b.LogicalDateLTE, StartDate: store.TimeRange{GTE: b.StartDateGTE, LTE: b.StartDateLTE},
		EndDate: store.TimeRange{GTE: b.EndDateGTE, LTE: b.EndDateLTE}, RunAfter: store.TimeRange{GTE: b.RunAfterGTE, LTE: b.RunAfterLTE},
		Page: b.store()})
}

func (s *server) listTaskInstancesBatch(ctx context.Context, in *listTIsBatchInput) (*struct{ Body TaskInstanceCollection }, error) {
	b := &in.Body
	states, err := parseTIStates(b.State)
	if err != nil {
		return nil, err
	}
	p := &store.TaskInstanceListParams{DagIDs: b.DagIDs, RunIDs: b.DagRunIDs, TaskIDs: b.TaskIDs, States: states, Page: b.store(),
		Pools: b.Pool, Queues: b.Queue, StartDate: store.TimeRange{GTE: b.StartGTE, LTE: b.StartLTE}, EndDate: store.TimeRange{GTE: b.EndGTE, LTE: b.EndLTE}}
	if in.DagID != AllDags {
		p.DagID = in.DagID
	}
	if in.RunID != AllRuns {
		p.RunID = in.RunID
	}
	return s.taskInstancePage(ctx, p)
}
