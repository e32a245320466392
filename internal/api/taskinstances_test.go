package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

const tiBase = "/api/v2/dags/etl/dagRuns/r1/taskInstances"

func TestListAndGetTaskInstances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.setTIState("r1", "extract", core.TISuccess)

	var c api.TaskInstanceCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase, nil, &c)
	if c.TotalEntries != 3 || len(c.TaskInstances) != 3 {
		t.Errorf("list: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"?state=success", nil, &c)
	if c.TotalEntries != 1 || c.TaskInstances[0].TaskID != "extract" {
		t.Errorf("state=success: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"?state=none", nil, &c)
	if c.TotalEntries != 2 {
		t.Errorf("state=none: %+v", c)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", tiBase+"?state=done", nil, `"done"`, "up_for_retry")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/nope/taskInstances", nil, `dag_run_id "nope"`)

	var ti core.TaskInstance
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract", nil, &ti)
	if ti.TaskID != "extract" || ti.State != core.TISuccess || ti.MapIndex != -1 {
		t.Errorf("get: %+v", ti)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract/-1", nil, &ti)
	if ti.TaskID != "extract" {
		t.Errorf("get by map index path: %+v", ti)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/nope", nil, `task_id "nope"`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/extract/3", nil, "map_index 3")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/extract?map_index=2", nil, "map_index 2")
}

func TestMappedTaskInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	run, err := e.st.DagRunGet(t.Context(), "etl", "r1")
	if err != nil {
		t.Fatal(err)
	}
	var inst []store.NewTaskInstance
	for i := range 2 {
		inst = append(inst, store.NewTaskInstance{ID: uuid.NewString(), TaskID: "transform", MapIndex: i, MaxTries: 1,
			Queue: "default", Pool: "default_pool", PoolSlots: 1, Operator: "noop", MapArgs: json.RawMessage(`{"x":1}`)})
	}
	if err := e.st.TaskInstanceExpand(context.Background(), &store.TaskInstanceExpandParams{DagRunID: run.ID, TaskID: "transform",
		Instances: inst, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	var ti core.TaskInstance
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/transform/1", nil, &ti)
	if ti.MapIndex != 1 || ti.TaskID != "transform" {
		t.Errorf("mapped get: %+v", ti)
	}
	// Airflow's listMapped, and the list's map_index filter.
	var c api.TaskInstanceCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/transform/listMapped", nil, &c)
	if c.TotalEntries != 2 || c.TaskInstances[0].MapIndex != 0 || c.TaskInstances[1].MapIndex != 1 {
		t.Errorf("listMapped: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"?map_index=1", nil, &c)
	if c.TotalEntries != 1 || c.TaskInstances[0].TaskID != "transform" {
		t.Errorf("list by map_index 1: %+v", c)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/extract/listMapped", nil, `task_id "extract" in dag_run_id "r1" is not mapped`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/nope/listMapped", nil, `task_id "nope"`)
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/transform?map_index=0", nil, &ti)
	if ti.MapIndex != 0 {
		t.Errorf("mapped get by query: %+v", ti)
	}
}

// A mark answers the instances it changed, Airflow's collection; its
// include_* options add relatives and other runs, and a dry run (the
// .../dry_run route, or Airflow 2's dry_run field) lists them and changes
// nothing; bad input names the problem and changes nothing.
func TestPatchTaskInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	var got api.TaskInstanceCollection
	e.must(http.StatusOK, core.RoleOp, "PATCH", tiBase+"/extract", map[string]any{"new_state": "success"}, &got)
	if got.TotalEntries != 1 || got.TaskInstances[0].TaskID != "extract" || got.TaskInstances[0].State != core.TISuccess {
		t.Errorf("after mark: %+v", got)
	}
	if !e.hasAudit("op", "task_instance.mark", "etl/r1/extract") {
		t.Errorf("no audit entry: %+v", e.audit())
	}
	n := len(e.audit())
	tasks := func(c api.TaskInstanceCollection) (ids []string) {
		for _, ti := range c.TaskInstances {
			ids = append(ids, ti.TaskID+"="+string(ti.State))
		}
		slices.Sort(ids)
		return ids
	}
	// transform with its upstream (extract: success already, left) and
	// downstream tasks, first as dry runs.
	body := map[string]any{"new_state": "failed", "include_upstream": true, "include_downstream": true}
	for _, path := range []string{tiBase + "/transform/dry_run", tiBase + "/transform/-1/dry_run"} {
		got = api.TaskInstanceCollection{}
		e.must(http.StatusOK, core.RoleOp, "PATCH", path, body, &got)
		if ids := tasks(got); !slices.Equal(ids, []string{"extract=success", "load=", "transform="}) {
			t.Errorf("PATCH %s = %v, want what would change as it is now", path, ids)
		}
	}
	dry := map[string]any{"new_state": "failed", "include_downstream": true, "dry_run": true}
	e.must(http.StatusOK, core.RoleOp, "PATCH", tiBase+"/transform", dry, &got)
	if cur, _ := e.st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "transform", -1); cur.State != core.TINone || len(e.audit()) != n {
		t.Fatalf("dry runs changed transform to %q or the audit log", cur.State)
	}
	body = map[string]any{"new_state": "success", "include_upstream": true, "include_downstream": true}
	e.must(http.StatusOK, core.RoleOp, "PATCH", tiBase+"/transform/-1", body, &got)
	if ids := tasks(got); !slices.Equal(ids, []string{"load=success", "transform=success"}) {
		t.Errorf("mark transform with its relatives = %v, want transform and load (extract was success)", ids)
	}
	e.must(http.StatusOK, core.RoleOp, "PATCH", tiBase+"/load", map[string]any{"new_state": "success"}, &got)
	if got.TotalEntries != 0 {
		t.Errorf("a mark to the state it has = %+v, want nothing changed", got)
	}

	n = len(e.audit())
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", tiBase+"/transform", map[string]any{"new_state": "running"},
		"new_state", `"running"`, "success, failed, skipped")
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", tiBase+"/transform", map[string]any{"new_state": "bogus"}, `"bogus"`)
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PATCH", tiBase+"/nope", map[string]any{"new_state": "failed"}, `task "nope"`)
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PATCH", tiBase+"/transform/3", map[string]any{"new_state": "failed"}, "map_index 3")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PATCH", api.Prefix+"/dags/etl/dagRuns/nope/taskInstances/transform", map[string]any{"new_state": "failed"}, `"nope"`)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PATCH", tiBase+"/transform", map[string]any{"new_state": "failed"}, "viewer")
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PATCH", tiBase+"/transform/dry_run", map[string]any{"new_state": "failed"}, "viewer")
	if cur, _ := e.st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "transform", -1); cur.State != core.TISuccess || len(e.audit()) != n {
		t.Errorf("rejected marks changed state %q or audit log", cur.State)
	}
}

func TestClearTaskInstancesAndTries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.trigger("r2")
	e.setTIState("r1", "extract", core.TISuccess)
	e.setTIState("r1", "transform", core.TIFailed)
	e.setTIState("r2", "transform", core.TIFailed)

	// Defaults: only_failed and dry_run are true.
	var res api.ClearResult
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/clearTaskInstances", map[string]any{}, &res)
	if res.TotalEntries != 2 {
		t.Errorf("dry run over all runs: %+v", res)
	}
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/clearTaskInstances",
		map[string]any{"dag_run_id": "r1", "task_ids": []string{"extract", "transform"}, "only_failed": false}, &res)
	if res.TotalEntries != 2 {
		t.Errorf("dry run of r1: %+v", res)
	}
	if got, _ := e.st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "transform", -1); got.State != core.TIFailed {
		t.Fatalf("dry run changed state to %q", got.State)
	}

	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/clearTaskInstances",
		map[string]any{"dag_run_id": "r1", "task_ids": []string{"transform"}, "dry_run": false}, &res)
	if res.TotalEntries != 1 || res.TaskInstances[0].State != core.TINone || res.TaskInstances[0].TryNumber != 2 {
		t.Errorf("clear: %+v", res)
	}
	// A task instance without a state has state null, as in Airflow's API (not "").
	if status, b := e.call(core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/r1/taskInstances/transform", nil); status != http.StatusOK ||
		!strings.Contains(string(b), `"state":null`) {
		t.Errorf("a cleared task instance: %d %s, want state null", status, b)
	}
	if got, _ := e.st.TaskInstanceGetByKey(t.Context(), "etl", "r2", "transform", -1); got.State != core.TIFailed {
		t.Errorf("clearing r1 changed r2: %q", got.State)
	}
	if !e.hasAudit("op", "task_instance.clear", "etl") {
		t.Errorf("no audit entry: %+v", e.audit())
	}

	var tries api.TaskInstanceCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/transform/tries", nil, &tries)
	if tries.TotalEntries != 2 || tries.TaskInstances[0].TryNumber != 1 || tries.TaskInstances[0].State != core.TIFailed ||
		tries.TaskInstances[1].TryNumber != 2 {
		t.Errorf("tries: %+v", tries)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/nope/tries", nil, `task_id "nope"`)

	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/dags/etl/clearTaskInstances",
		map[string]any{"dag_run_id": "r1", "task_ids": []string{"nope"}, "dry_run": false}, `task "nope"`)
	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/dags/etl/clearTaskInstances",
		map[string]any{"dag_run_id": "zzz"}, `dag_run_id "zzz"`)
	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/dags/nope/clearTaskInstances", map[string]any{}, `dag_id "nope"`)
}

// Airflow's batch lists: POST .../dagRuns/list and .../taskInstances/list
// with the filters in the body, "~" for every DAG and run; a body field
// Weir does not take is refused, naming it.
func TestBatchLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.trigger("r2")
	e.setTIState("r2", "extract", core.TISuccess)
	var runs api.DAGRunCollection
	e.must(http.StatusOK, core.RoleViewer, "POST", "/api/v2/dags/~/dagRuns/list", map[string]any{"dag_ids": []string{"etl"}, "page_limit": 1}, &runs)
	if runs.TotalEntries != 2 || len(runs.DagRuns) != 1 {
		t.Errorf("runs batch: %+v, want a page of 1 of 2", runs)
	}
	e.must(http.StatusOK, core.RoleViewer, "POST", "/api/v2/dags/~/dagRuns/list", map[string]any{"dag_ids": []string{"other"}}, &runs)
	if runs.TotalEntries != 0 {
		t.Errorf("runs batch of another DAG: %+v", runs)
	}
	var c api.TaskInstanceCollection
	e.must(http.StatusOK, core.RoleViewer, "POST", "/api/v2/dags/~/dagRuns/~/taskInstances/list",
		map[string]any{"dag_run_ids": []string{"r2"}, "state": []string{"success", "none"}, "order_by": "task_id"}, &c)
	if c.TotalEntries != 3 || c.TaskInstances[0].TaskID != "extract" || c.TaskInstances[0].State != core.TISuccess {
		t.Errorf("task instances batch: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "POST", "/api/v2/dags/etl/dagRuns/r1/taskInstances/list", map[string]any{"task_ids": []string{"load"}}, &c)
	if c.TotalEntries != 1 || c.TaskInstances[0].RunID != "r1" {
		t.Errorf("task instances batch of r1's load: %+v", c)
	}
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleViewer, "POST", "/api/v2/dags/~/dagRuns/~/taskInstances/list",
		map[string]any{"executor": []string{"x"}}, "executor")
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "POST", "/api/v2/dags/~/dagRuns/list", map[string]any{"states": []string{"bogus"}}, `"bogus"`)
}

// A task instance answers every field of Airflow 3's TaskInstanceResponse
// (its generated clients refuse a body without them), from the GET, the
// lists and the tries alike.
func TestTaskInstancesAnswerAirflowsFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", map[string]any{"dag_run_id": "r1", "logical_date": "2026-01-01T00:00:00Z"}, nil)
	fields := []string{"id", "task_id", "dag_id", "dag_run_id", "map_index", "logical_date", "run_after", "start_date", "end_date",
		"duration", "state", "try_number", "max_tries", "task_display_name", "dag_display_name", "hostname", "unixname", "pool",
		"pool_slots", "queue", "priority_weight", "operator", "operator_name", "queued_when", "scheduled_when", "pid", "executor",
		"executor_config", "note", "rendered_map_index", "rendered_fields", "trigger", "triggerer_job", "dag_version"}
	check := func(what string, ti map[string]json.RawMessage) {
		t.Helper()
		for _, f := range fields {
			if _, ok := ti[f]; !ok {
				t.Errorf("%s: no %q", what, f)
			}
		}
		if string(ti["logical_date"]) != `"2026-01-01T00:00:00Z"` || string(ti["task_display_name"]) != string(ti["task_id"]) ||
			!strings.Contains(string(ti["dag_version"]), `"version_number":1`) {
			t.Errorf("%s: logical_date %s task_display_name %s dag_version %s", what, ti["logical_date"], ti["task_display_name"], ti["dag_version"])
		}
	}
	var ti map[string]json.RawMessage
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract", nil, &ti)
	check("get", ti)
	var c struct {
		TaskInstances []map[string]json.RawMessage `json:"task_instances"`
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase, nil, &c)
	check("list", c.TaskInstances[0])
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract/tries", nil, &c)
	check("tries", c.TaskInstances[0])
	e.must(http.StatusOK, core.RoleOp, "PATCH", tiBase+"/extract", map[string]any{"new_state": "success"}, &c)
	check("mark", c.TaskInstances[0])
}
