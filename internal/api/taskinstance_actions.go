package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
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
	}
}

// markable are the states PATCH may set.
var markable = []core.TIState{core.TISuccess, core.TIFailed, core.TISkipped}

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
	if !slices.Contains(markable, st) {
		return nil, invalid(fmt.Sprintf("new_state: %q cannot be set by hand; allowed: success, failed, skipped", in.Body.NewState))
	}
	ti, err := s.taskInstance(ctx, in.DagID, in.RunID, in.TaskID, in.MapIndex)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	if err := runs.MarkTaskInstance(ctx, s.st, s.clk, ti.ID, st); err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "task_instance.mark", tiTarget(ti), "new_state="+string(st))
	if ti, err = s.st.TaskInstanceGet(ctx, ti.ID); err != nil {
		return nil, s.problem(ctx, fmt.Errorf("reload task instance %s: %w", ti.ID, err))
	}
	return &struct{ Body core.TaskInstance }{*ti}, nil
}

func (s *server) clearTaskInstances(ctx context.Context, in *clearTIsInput) (*struct{ Body ClearResult }, error) {
	if _, err := s.dag(ctx, in.DagID); err != nil {
		return nil, s.problem(ctx, err)
	}
	p := &store.TaskInstanceListParams{DagID: in.DagID}
	if in.Body.DagRunID != "" {
		run, err := s.dagRun(ctx, in.DagID, in.Body.DagRunID)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		p = &store.TaskInstanceListParams{DagRunID: run.ID}
	}
	tis, err := s.st.TaskInstanceList(ctx, p)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("list task instances of dag_id %q: %w", in.DagID, err))
	}
	if len(in.Body.TaskIDs) > 0 {
		if tis, err = selectTasks(tis, in.Body.TaskIDs); err != nil {
			return nil, err
		}
	}
	selected := clearable(tis, in.Body.OnlyFailed == nil || *in.Body.OnlyFailed)
	if dryRun(in.Body.DryRun) || len(selected) == 0 {
		return &struct{ Body ClearResult }{ClearResult{TaskInstances: selected, TotalEntries: len(selected)}}, nil
	}
	ids := make([]string, len(selected))
	targets := make([]string, len(selected))
	for i, ti := range selected {
		ids[i], targets[i] = ti.ID, tiTarget(&ti)
	}
	if err := runs.ClearTaskInstances(ctx, s.st, s.clk, ids, runs.KeepTaskState(in.Body.KeepTaskState)); err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "task_instance.clear", in.DagID, strings.Join(targets, ","))
	cleared := make([]core.TaskInstance, 0, len(selected))
	for _, ti := range selected {
		now, err := s.taskInstance(ctx, ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		cleared = append(cleared, *now)
	}
	return &struct{ Body ClearResult }{ClearResult{TaskInstances: cleared, TotalEntries: len(cleared)}}, nil
}

// selectTasks keeps the instances of the named tasks; a name matching no
// instance is an error naming it.
func selectTasks(tis []core.TaskInstance, taskIDs []string) ([]core.TaskInstance, error) {
	out := []core.TaskInstance{}
	seen := map[string]bool{}
	for _, id := range taskIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		n := len(out)
		for _, ti := range tis {
			if ti.TaskID == id {
				out = append(out, ti)
			}
		}
		if len(out) == n {
			return nil, huma.NewError(http.StatusNotFound, fmt.Sprintf("task_ids: task %q has no task instance in the selected runs", id))
		}
	}
	return out, nil
}

// tiTarget names a task instance in audit entries: dag/run/task[/map_index].
func tiTarget(ti *core.TaskInstance) string {
	t := ti.DagID + "/" + ti.RunID + "/" + ti.TaskID
	if ti.MapIndex >= 0 {
		t += fmt.Sprintf("/%d", ti.MapIndex)
	}
	return t
}
