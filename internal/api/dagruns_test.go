package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestTriggerDagRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var run core.DagRun
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns",
		map[string]any{"dag_run_id": "r1", "logical_date": "2026-02-01T00:00:00Z", "conf": map[string]any{"n": 3}}, &run)
	if run.RunID != "r1" || run.State != core.RunQueued || run.RunType != core.RunManual || string(run.Conf) != `{"n":3}` ||
		run.LogicalDate == nil || run.LogicalDate.Format("2006-01-02") != "2026-02-01" {
		t.Errorf("run %+v conf %s", run, run.Conf)
	}
	if !e.hasAudit("op", "dag_run.trigger", "etl/r1") {
		t.Errorf("no audit entry: %+v", e.audit())
	}
	// Without a run id one is generated.
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", map[string]any{}, &run)
	if run.RunID == "" || run.RunID == "r1" {
		t.Errorf("generated run id %q", run.RunID)
	}

	e.mustProblem(http.StatusConflict, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", map[string]any{"dag_run_id": "r1"}, `"r1"`)
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns",
		map[string]any{"dag_run_id": "r2", "conf": []int{1}}, "conf must be a JSON object")
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns",
		map[string]any{"dag_run_id": "a/b"}, "run_id")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/dags/nope/dagRuns", map[string]any{}, `"nope"`)
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns",
		map[string]any{"logical_date": "yesterday"}, "")

	runs, err := e.st.DagRunList(t.Context(), &store.DagRunListParams{})
	if err != nil || len(runs) != 2 {
		t.Errorf("bad requests changed the runs: %d runs, %v", len(runs), err)
	}
}

func TestListAndGetDagRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.syncDag(core.DAG{DagID: "other", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
	r1 := e.trigger("r1")
	e.trigger("r2")
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/other/dagRuns", map[string]any{"dag_run_id": "o1"}, nil)
	if _, err := e.st.DagRunSetState(t.Context(), &store.DagRunSetStateParams{ID: r1.ID, To: core.RunFailed, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}

	list := func(path string) (map[string]bool, int) {
		var c api.DAGRunCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &c)
		ids := map[string]bool{}
		for _, r := range c.DagRuns {
			ids[r.DagID+"/"+r.RunID] = true
		}
		return ids, c.TotalEntries
	}
	if ids, total := list("/api/v2/dags/etl/dagRuns"); total != 2 || !ids["etl/r1"] || !ids["etl/r2"] {
		t.Errorf("etl runs %v total %d", ids, total)
	}
	if ids, total := list("/api/v2/dags/etl/dagRuns?state=failed"); total != 1 || !ids["etl/r1"] {
		t.Errorf("failed runs %v total %d", ids, total)
	}
	if ids, total := list("/api/v2/dags/~/dagRuns?state=queued,failed"); total != 3 || !ids["other/o1"] {
		t.Errorf("all runs %v total %d", ids, total)
	}
	if ids, total := list("/api/v2/dags/~/dagRuns?limit=1"); total != 3 || len(ids) != 1 {
		t.Errorf("limited runs %v total %d", ids, total)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?state=bogus", nil, `"bogus"`, "queued, running, success, failed")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/nope/dagRuns", nil, `dag_id "nope"`)

	var got core.DagRun
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/r1", nil, &got)
	if got.RunID != "r1" || got.State != core.RunFailed {
		t.Errorf("run %+v", got)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/nope", nil, `dag_run_id "nope"`)
}

func TestClearDagRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.setTIState("r1", "extract", core.TISuccess)
	e.setTIState("r1", "transform", core.TIFailed)
	e.setTIState("r1", "load", core.TIUpstreamFailed)

	// dry_run defaults to true: nothing changes.
	var res api.ClearResult
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns/r1/clear", map[string]any{"only_failed": true}, &res)
	if res.TotalEntries != 2 || res.DagRun != nil {
		t.Errorf("dry run: %+v", res)
	}
	ti, _ := e.st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "transform", -1)
	if ti.State != core.TIFailed || len(e.audit()) != 1 {
		t.Fatalf("dry run changed state %q or audit %+v", ti.State, e.audit())
	}

	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns/r1/clear",
		map[string]any{"only_failed": true, "dry_run": false}, &res)
	if res.TotalEntries != 2 || res.DagRun == nil {
		t.Errorf("clear: %+v", res)
	}
	e.wantRun("clear", "r1", map[string]core.TIState{"extract": core.TISuccess, "transform": core.TINone, "load": core.TINone}, "dag_run.clear")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns/nope/clear", map[string]any{"dry_run": false}, `"nope"`)
}

func TestListDagRunsByTypeAndDate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.trigger("r2")
	for query, want := range map[string]int{
		"run_type=manual,backfill":              2,
		"run_type=scheduled":                    0,
		"logical_date_lte=2000-01-01T00:00:00Z": 0,
		"logical_date_gte=2000-01-01T00:00:00Z": 2,
	} {
		var got api.DAGRunCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?"+query, nil, &got)
		if got.TotalEntries != want {
			t.Errorf("runs with %s: %d, want %d", query, got.TotalEntries, want)
		}
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?run_type=cron", nil, `"cron"`, "asset_triggered")
}

func TestPatchDagRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.setTIState("r1", "extract", core.TISuccess)
	e.setTIState("r1", "transform", core.TIRunning)

	var run core.DagRun
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl/dagRuns/r1", map[string]any{"state": "failed"}, &run)
	if run.State != core.RunFailed || run.EndDate == nil {
		t.Errorf("run = %+v, want failed with an end date", run)
	}
	e.wantRun("mark failed", "r1", map[string]core.TIState{"extract": core.TISuccess, "transform": core.TIFailed, "load": core.TISkipped}, "dag_run.mark")
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", "/api/v2/dags/etl/dagRuns/r1", map[string]any{"state": "running"}, "allowed: success, failed")
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PATCH", "/api/v2/dags/etl/dagRuns/r1", map[string]any{"state": "success"})
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PATCH", "/api/v2/dags/etl/dagRuns/nope", map[string]any{"state": "success"}, `"nope"`)
}

// wantRun checks the states of etl's instances in run runID after an
// op's change, and the change's audit entry.
func (e *env) wantRun(after, runID string, want map[string]core.TIState, action string) {
	e.t.Helper()
	for task, state := range want {
		ti, err := e.st.TaskInstanceGetByKey(e.t.Context(), "etl", runID, task, -1)
		if err != nil || ti.State != state {
			e.t.Errorf("after %s %s is %v (%v), want %q", after, task, ti, err, state)
		}
	}
	if !e.hasAudit("op", action, "etl/"+runID) {
		e.t.Errorf("no %s audit entry: %+v", action, e.audit())
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestTriggerRefusesShellRunID: a run id is pasted into task commands and
// paths, so one with shell syntax is refused (issue 13, finding 2) with a
// 400 that names the allowed pattern, and creates nothing.
func TestTriggerRefusesShellRunID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"$(id>x)", "a`id`", "x; id"} {
		e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns",
			map[string]any{"dag_run_id": id}, "does not match the allowed pattern ^[A-Za-z0-9_.~:+-]+$")
	}
	if n, err := e.st.DagRunCount(t.Context(), &store.DagRunListParams{}); err != nil || n != 0 {
		t.Errorf("refused triggers created %d runs (err %v)", n, err)
	}
}

// A run triggered for a logical date its DAG has a run at already is a
// conflict naming that run, as Airflow's unique logical date: a script
// that retries "the run for date X" makes one. Runs at "now" (no date
// given) are not held to it.
func TestTriggerRefusesATakenLogicalDate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := map[string]any{"dag_run_id": "x1", "logical_date": "2026-02-01T00:00:00Z"}
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", at, nil)
	at["dag_run_id"] = "x2"
	e.mustProblem(http.StatusConflict, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", at, `run "x1" has logical date 2026-02-01T00:00:00Z already`)
	at["logical_date"] = "2026-02-01T00:00:00.000001Z"
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", at, nil)
	e.trigger("now1")
	e.trigger("now2") // the same "now" on the test's clock
}

// A run answers every field Airflow 3's DAGRunResponse requires (its
// generated clients refuse a body without them), from the trigger, the
// run's GET and the lists alike; what Weir keeps none of is null.
func TestRunsAnswerAirflowsFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fields := []string{"dag_run_id", "dag_id", "logical_date", "queued_at", "start_date", "end_date", "data_interval_start",
		"data_interval_end", "run_after", "last_scheduling_decision", "run_type", "state", "triggered_by", "conf", "note",
		"dag_versions", "bundle_version", "dag_display_name", "duration", "triggering_user_name"}
	check := func(what string, run map[string]json.RawMessage) {
		t.Helper()
		for _, f := range fields {
			if _, ok := run[f]; !ok {
				t.Errorf("%s: no %q in %v", what, f, run)
			}
		}
		var versions []map[string]any
		if err := json.Unmarshal(run["dag_versions"], &versions); err != nil || len(versions) != 1 || versions[0]["version_number"] != 1.0 {
			t.Errorf("%s: dag_versions %s, want the run's version", what, run["dag_versions"])
		}
		if string(run["conf"]) != "{}" || string(run["note"]) != "null" || string(run["dag_display_name"]) != `"etl"` {
			t.Errorf("%s: conf %s note %s dag_display_name %s", what, run["conf"], run["note"], run["dag_display_name"])
		}
	}
	var run map[string]json.RawMessage
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", map[string]any{"dag_run_id": "r1", "logical_date": "2026-01-01T00:00:00Z"}, &run)
	check("trigger", run)
	if string(run["run_after"]) != `"2026-01-01T00:00:00Z"` {
		t.Errorf("run_after %s, want the logical date", run["run_after"])
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/r1", nil, &run)
	check("get", run)
	var list struct {
		DagRuns []map[string]json.RawMessage `json:"dag_runs"`
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/~/dagRuns", nil, &list)
	check("list", list.DagRuns[0])
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl/dagRuns/r1", map[string]any{"state": "failed"}, &run)
	check("mark", run)
	if string(run["state"]) != `"failed"` || string(run["duration"]) != "null" {
		t.Errorf("a run marked failed before it started: state %s duration %s, want failed and none", run["state"], run["duration"])
	}
}

// Runs are listed by Airflow's start, end and run_after ranges and
// run_id_pattern, in the GET and the batch list.
func TestRunListRanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("nightly_1")
	e.trigger("adhoc")
	var page api.DAGRunCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?run_id_pattern=NIGHT", nil, &page)
	if page.TotalEntries != 1 || page.DagRuns[0].RunID != "nightly_1" {
		t.Errorf("run_id_pattern=NIGHT: %+v", page)
	}
	now := e.clk.Now().UTC().Format(time.RFC3339)
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?run_after_lte="+now+"&end_date_lte="+now, nil, &page)
	if page.TotalEntries != 0 {
		t.Errorf("queued runs with an end_date bound: %d, want none (they have not ended)", page.TotalEntries)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?run_after_lte="+now, nil, &page)
	if page.TotalEntries != 2 {
		t.Errorf("run_after_lte now: %d, want both", page.TotalEntries)
	}
	e.must(http.StatusOK, core.RoleViewer, "POST", "/api/v2/dags/~/dagRuns/list", map[string]any{"start_date_gte": now}, &page)
	if page.TotalEntries != 0 {
		t.Errorf("batch start_date_gte: %d, want none started", page.TotalEntries)
	}
}

// A run is deleted with its task instances, as Airflow's DELETE of a run;
// one whose task instance a worker holds is a 409; the audit log keeps it.
func TestDeleteDagRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.trigger("r2")
	e.setTIState("r2", "extract", core.TIRunning)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "DELETE", "/api/v2/dags/etl/dagRuns/r1", nil, "")
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", "/api/v2/dags/etl/dagRuns/r1", nil, nil)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/r1", nil, "r1")
	if n, _ := e.st.TaskInstanceCount(t.Context(), &store.TaskInstanceListParams{DagID: "etl", RunID: "r1"}); n != 0 {
		t.Errorf("%d task instances of the deleted run left", n)
	}
	if !e.hasAudit("op", "dag_run.delete", "etl/r1") {
		t.Error("the delete is not audited")
	}
	e.mustProblem(http.StatusConflict, core.RoleOp, "DELETE", "/api/v2/dags/etl/dagRuns/r2", nil, "1 task instances queued, running or deferred")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "DELETE", "/api/v2/dags/etl/dagRuns/r1", nil, `dag_run_id "r1"`)
	var page api.DAGRunCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns", nil, &page)
	if page.TotalEntries != 1 || page.DagRuns[0].RunID != "r2" {
		t.Errorf("runs left: %+v", page)
	}
}
