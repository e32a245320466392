package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// patchTIBody is Airflow's PatchTaskInstanceBody (no note: Weir keeps
// none), with Airflow 2's dry_run.
type patchTIBody struct {
	NewState          string `json:"new_state" doc:"success, failed or skipped"`
	IncludeUpstream   bool   `json:"include_upstream,omitempty" doc:"also every task upstream of task_id"`
	IncludeDownstream bool   `json:"include_downstream,omitempty" doc:"also every task downstream of task_id"`
	IncludePast       bool   `json:"include_past,omitempty" doc:"also the selected tasks in the DAG's runs with an earlier logical date"`
	IncludeFuture     bool   `json:"include_future,omitempty" doc:"also the selected tasks in the DAG's runs with a later logical date"`
	DryRun            bool   `json:"dry_run,omitempty" doc:"only list what would change (as the .../dry_run routes)"`
}

type patchTIInput struct {
	TaskInstanceParam
	Body patchTIBody
}

type patchMappedTIInput struct {
	DagRunParam
	TaskID   string `path:"task_id" doc:"task id"`
	MapIndex int    `path:"map_index" minimum:"-1" doc:"map index"`
	Body     patchTIBody
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
	const markDoc = "Sets the task instance (map_index; without it, each instance of the task), and what the include_* options " +
		"add, to new_state, as Airflow's set_task_instance_state; those already in it are left. Answers the instances changed " +
		"(with dry_run, or on the .../dry_run route, the ones that would change; nothing changes)."
	tiPath := Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}"
	for _, r := range []struct{ id, path, summary string }{
		{"patch_task_instance", tiPath, "Mark a task instance success, failed or skipped"},
		{"patch_task_instance_dry_run", tiPath + "/dry_run", "List what marking a task instance would change"},
	} {
		register(s, core.RoleOp, huma.Operation{OperationID: r.id, Method: http.MethodPatch, Path: r.path, Tags: tags,
			Summary: r.summary, Description: markDoc, Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		}, func(ctx context.Context, in *patchTIInput) (*struct{ Body TaskInstanceCollection }, error) {
			var mi *int // -1, the default: each instance (the one of an unmapped task)
			if in.MapIndex != core.NoMapIndex {
				mi = &in.MapIndex
			}
			return s.markTaskInstances(ctx, &in.DagRunParam, in.TaskID, mi, in.Body, r.id != "patch_task_instance")
		})
		register(s, core.RoleOp, huma.Operation{OperationID: r.id + "_by_map_index", Method: http.MethodPatch,
			Path: strings.Replace(r.path, "{task_id}", "{task_id}/{map_index}", 1), Tags: tags,
			Summary: r.summary, Description: markDoc, Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		}, func(ctx context.Context, in *patchMappedTIInput) (*struct{ Body TaskInstanceCollection }, error) {
			return s.markTaskInstances(ctx, &in.DagRunParam, in.TaskID, &in.MapIndex, in.Body, r.id != "patch_task_instance")
		})
	}
	register(s, core.RoleOp, huma.Operation{
		OperationID: "post_clear_task_instances", Method: http.MethodPost, Path: Prefix + "/dags/{dag_id}/clearTaskInstances", Tags: tags,
		Summary:     "Clear task instances",
		Description: "Starts a new try of the selected task instances. With dry_run (the default) nothing changes and the response lists what would be cleared.",
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.clearTaskInstances)
}

// markTaskInstances marks taskID's instances in the run (mapIndex: one of
// them) as body says (service.Mark).
func (s *server) markTaskInstances(ctx context.Context, run *DagRunParam, taskID string, mapIndex *int, body patchTIBody,
	dry bool) (*struct{ Body TaskInstanceCollection }, error) {
	st, err := parseTIState("new_state", body.NewState)
	if err != nil {
		return nil, err
	}
	tis, err := s.svc.Mark(ctx, actor(ctx), service.MarkParams{DagID: run.DagID, RunID: run.RunID, TaskID: taskID, MapIndex: mapIndex,
		State: st, Upstream: body.IncludeUpstream, Downstream: body.IncludeDownstream, Past: body.IncludePast, Future: body.IncludeFuture,
		DryRun: dry || body.DryRun})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.tiCollection(ctx, tis, len(tis))
}

func (s *server) clearTaskInstances(ctx context.Context, in *clearTIsInput) (*struct{ Body ClearResult }, error) {
	tis, err := s.svc.Clear(ctx, actor(ctx), service.ClearParams{DagID: in.DagID, RunID: in.Body.DagRunID,
		TaskIDs: in.Body.TaskIDs, OnlyFailed: in.Body.OnlyFailed == nil || *in.Body.OnlyFailed,
		KeepTaskState: in.Body.KeepTaskState, DryRun: dryRun(in.Body.DryRun),
		Downstream: in.Body.IncludeDownstream, StartDate: in.Body.StartDate, EndDate: in.Body.EndDate})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	shown, err := s.tiResponses(ctx, tis)
	if err != nil {
		return nil, err
	}
	return &struct{ Body ClearResult }{ClearResult{TaskInstances: shown, TotalEntries: len(tis)}}, nil
}
