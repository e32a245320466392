package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

type patchTIInput struct {
	TaskInstanceParam
	Body struct {
		NewState string `json:"new_state" doc:"success, failed or skipped"`
	}
}

type clearTIsInput struct {
	DagIDParam
	Body struct {
		DagRunID      string   `json:"dag_run_id,omitempty" doc:"the run whose task instances to clear; empty = every run of the DAG"`
		TaskIDs       []string `json:"task_ids,omitempty" doc:"tasks to clear; empty = every task"`
		OnlyFailed    *bool    `json:"only_failed,omitempty" doc:"clear only failed and upstream_failed instances (default true, as in Airflow)"`
		DryRun        *bool    `json:"dry_run,omitempty" doc:"only report what would be cleared (default true, as in Airflow)"`
		KeepTaskState bool     `json:"keep_task_state,omitempty" doc:"keep the cleared instances' task state (by default a clear deletes it)"`
		// Airflow's clearTaskInstances fields for the CLI's --downstream and date range.
		IncludeDownstream bool       `json:"include_downstream,omitempty" doc:"also clear every task downstream of task_ids"`
		StartDate         *time.Time `json:"start_date,omitempty" doc:"only runs whose logical date is at or after this"`
		EndDate           *time.Time `json:"end_date,omitempty" doc:"only runs whose logical date is at or before this"`
	}
}

func (s *server) registerTaskInstanceActions() {
	tags := []string{"Task Instance"}
	register(s, core.RoleOp, huma.Operation{
		OperationID: "patch_task_instance", Method: http.MethodPatch,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}", Tags: tags,
		Summary: "Mark a task instance success, failed or skipped",
		Errors:  []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
	}, s.patchTaskInstance)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "post_clear_task_instances", Method: http.MethodPost, Path: Prefix + "/dags/{dag_id}/clearTaskInstances", Tags: tags,
		Summary:     "Clear task instances",
		Description: "Starts a new try of the selected task instances. With dry_run (the default) nothing changes and the response lists what would be cleared.",
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.clearTaskInstances)
}

func (s *server) patchTaskInstance(ctx context.Context, in *patchTIInput) (*struct{ Body core.TaskInstance }, error) {
	st, err := parseTIState("new_state", in.Body.NewState)
	if err != nil {
		return nil, err
	}
	ti, err := s.svc.MarkTaskInstance(ctx, actor(ctx), core.TIKey{DagID: in.DagID, RunID: in.RunID, TaskID: in.TaskID,
		MapIndex: in.MapIndex}, st)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.TaskInstance }{*ti}, nil
}

func (s *server) clearTaskInstances(ctx context.Context, in *clearTIsInput) (*struct{ Body ClearResult }, error) {
	tis, err := s.svc.Clear(ctx, actor(ctx), service.ClearParams{DagID: in.DagID, RunID: in.Body.DagRunID,
		TaskIDs: in.Body.TaskIDs, OnlyFailed: in.Body.OnlyFailed == nil || *in.Body.OnlyFailed,
		KeepTaskState: in.Body.KeepTaskState, DryRun: dryRun(in.Body.DryRun),
		Downstream: in.Body.IncludeDownstream, StartDate: in.Body.StartDate, EndDate: in.Body.EndDate})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body ClearResult }{ClearResult{TaskInstances: tis, TotalEntries: len(tis)}}, nil
}
