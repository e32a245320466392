package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

func TestListDags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"a", "b"} {
		e.syncDag(core.DAG{DagID: id, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
	}
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/b", map[string]any{"is_paused": true}, nil)

	ids := func(query string) ([]string, int) {
		var c api.DAGCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags"+query, nil, &c)
		out := []string{}
		for _, d := range c.Dags {
			out = append(out, d.DagID)
		}
		return out, c.TotalEntries
	}
	for _, tc := range []struct {
		query string
		want  []string
		total int
	}{
		{"", []string{"a", "b", "etl"}, 3},
		{"?paused=true", []string{"b"}, 1},
		{"?paused=false", []string{"a", "etl"}, 2},
		{"?limit=1&offset=1", []string{"b"}, 3},
		{"?offset=10", []string{}, 3},
		{"?limit=5000", []string{"a", "b", "etl"}, 3}, // cut to MaxPageLimit, as Airflow does, not refused
	} {
		got, total := ids(tc.query)
		if diff := cmp.Diff(tc.want, got); diff != "" || total != tc.total {
			t.Errorf("GET /dags%s: total %d (want %d), ids diff (-want +got):\n%s", tc.query, total, tc.total, diff)
		}
	}
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleViewer, "GET", "/api/v2/dags?limit=0", nil)
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleViewer, "GET", "/api/v2/dags?paused=maybe", nil)
}

func TestGetDag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var d api.DAGDetails
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl", nil, &d)
	if d.DagID != "etl" || d.Description != "extract, transform, load" || d.FileLoc != "/dags/etl.yaml" {
		t.Errorf("dag %+v", d.DagModel)
	}
	want := []api.TaskResponse{
		{TaskID: "extract", Operator: "noop", UpstreamTaskIDs: []string{}, DownstreamTaskIDs: []string{"transform"},
			TriggerRule: "all_success", Queue: "default", Pool: "default_pool", PoolSlots: 1},
		{TaskID: "transform", Operator: "noop", UpstreamTaskIDs: []string{"extract"}, DownstreamTaskIDs: []string{"load"},
			TriggerRule: "all_success", Retries: 2, RetryDelay: "1m0s", Queue: "default", Pool: "default_pool", PoolSlots: 1},
		{TaskID: "load", Operator: "noop", UpstreamTaskIDs: []string{"transform"}, DownstreamTaskIDs: []string{},
			TriggerRule: "all_success", Queue: "default", Pool: "db", PoolSlots: 1},
	}
	if diff := cmp.Diff(want, d.Tasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/nope", nil, `dag_id "nope"`, "not found")
}

func TestPatchDag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var d api.DAGDetails
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": true}, &d)
	if !d.IsPaused {
		t.Error("PATCH is_paused=true did not pause")
	}
	if !e.hasAudit("op", "dag.pause", "etl") {
		t.Errorf("no audit entry: %+v", e.audit())
	}
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": false}, &d)
	if d.IsPaused || !e.hasAudit("op", "dag.unpause", "etl") {
		t.Errorf("unpause: paused=%v audit %+v", d.IsPaused, e.audit())
	}
	n := len(e.audit())
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PATCH", "/api/v2/dags/nope", map[string]any{"is_paused": true}, `dag_id "nope"`)
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleOp, "PATCH", "/api/v2/dags/etl", map[string]any{}, "is_paused")
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleOp, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": "yes"}, "")
	if len(e.audit()) != n {
		t.Errorf("rejected requests wrote audit entries")
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl", nil, &d)
	if d.IsPaused {
		t.Error("rejected PATCH changed is_paused")
	}
}

// The DAG list takes Airflow's filters — dag_id_pattern, tags (repeated or
// comma-separated, any or all), exclude_stale — and refuses a query
// parameter it does not take, naming it, rather than answering the whole
// list; a run list's state filter takes repeated values too.
func TestListFiltersAsAirflowSendsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var c api.DAGCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?dag_id_pattern=ET", nil, &c)
	if c.TotalEntries != 1 || c.Dags[0].DagID != "etl" {
		t.Errorf("dag_id_pattern=ET: %+v", c)
	}
	for _, q := range []string{"tags=demo&tags=nope", "tags=nope,demo", "tags=demo&tags_match_mode=all", "exclude_stale=true&tags=demo"} {
		c = api.DAGCollection{}
		e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?"+q, nil, &c)
		if c.TotalEntries != 1 {
			t.Errorf("%s: %d DAGs, want etl", q, c.TotalEntries)
		}
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?tags=demo&tags=nope&tags_match_mode=all", nil, &c)
	if c.TotalEntries != 0 {
		t.Errorf("all of demo and nope: %d DAGs, want none", c.TotalEntries)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/dags?dag_display_name_pattern=x&owners=me", nil,
		`query parameter "dag_display_name_pattern", "owners" is not one GET /api/v2/dags takes`, "dag_id_pattern")
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/dags/etl?fields=x", nil, `"fields"`, "it takes: none")
	var d api.DAGDetails
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/details", nil, &d)
	if d.DagID != "etl" || len(d.Tasks) != 3 {
		t.Errorf("GET /dags/etl/details: %+v, want etl with its tasks", d)
	}

	e.trigger("r1")
	e.trigger("r2")
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl/dagRuns/r2", map[string]any{"state": "failed"}, nil)
	var runs struct {
		TotalEntries int `json:"total_entries"`
	}
	for _, q := range []string{"state=failed&state=queued", "state=queued,failed", "state=queued&state=failed"} {
		e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns?"+q, nil, &runs)
		if runs.TotalEntries != 2 {
			t.Errorf("%s: %d runs, want both", q, runs.TotalEntries)
		}
	}
}

// PATCH /dags pauses or unpauses the page of DAGs its filter selects
// ("~": every one), each audited, and answers them; a viewer may not, and
// update_mask names is_paused alone.
func TestPatchDagsByFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var c api.DAGCollection
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags?dag_id_pattern=et", map[string]any{"is_paused": true}, &c)
	if c.TotalEntries != 1 || c.Dags[0].DagID != "etl" || !c.Dags[0].IsPaused {
		t.Errorf("pause by pattern: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?paused=true", nil, &c)
	if c.TotalEntries != 1 {
		t.Errorf("paused DAGs after the pattern's pause: %d, want etl alone", c.TotalEntries)
	}
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags?dag_id_pattern=~&update_mask=is_paused", map[string]any{"is_paused": false}, &c)
	all := c.TotalEntries
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?paused=true", nil, &c)
	if all < 1 || c.TotalEntries != 0 {
		t.Errorf("unpause every DAG: %d patched, %d paused still", all, c.TotalEntries)
	}
	if !e.hasAudit("op", "dag.pause", "etl") {
		t.Errorf("no audit of the pause: %+v", e.audit())
	}
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", "/api/v2/dags?update_mask=tags", map[string]any{"is_paused": true}, `update_mask names "tags"`)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PATCH", "/api/v2/dags", map[string]any{"is_paused": true}, "op")
}

// A DAG answers every field of Airflow 3's DAGResponse (its generated
// clients refuse a body without them), tags as Airflow's objects, from the
// list and the GET alike; the CLI reads them back.
func TestDagsAnswerAirflowsFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fields := []string{"dag_id", "dag_display_name", "is_paused", "is_stale", "last_parsed_time", "last_expired", "bundle_name",
		"bundle_version", "relative_fileloc", "fileloc", "description", "timetable_summary", "timetable_description", "tags",
		"max_active_tasks", "max_active_runs", "max_consecutive_failed_dag_runs", "has_task_concurrency_limits", "has_import_errors",
		"next_dagrun_logical_date", "next_dagrun_data_interval_start", "next_dagrun_data_interval_end", "next_dagrun_run_after",
		"owners", "file_token"}
	check := func(what string, d map[string]json.RawMessage) {
		t.Helper()
		for _, f := range fields {
			if _, ok := d[f]; !ok {
				t.Errorf("%s: no %q", what, f)
			}
		}
		if string(d["tags"]) != `[{"name":"demo","dag_id":"etl"}]` || string(d["max_active_runs"]) != "16" || string(d["is_stale"]) != "false" {
			t.Errorf("%s: tags %s max_active_runs %s is_stale %s", what, d["tags"], d["max_active_runs"], d["is_stale"])
		}
	}
	var list struct {
		Dags []map[string]json.RawMessage `json:"dags"`
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?dag_id_pattern=etl", nil, &list)
	check("list", list.Dags[0])
	var d map[string]json.RawMessage
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl", nil, &d)
	check("get", d)
	var back api.DAGCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags?dag_id_pattern=etl", nil, &back)
	if got := back.Dags[0].Dag(); len(got.Tags) != 1 || got.Tags[0] != "demo" {
		t.Errorf("the DAG read back: tags %v", got.Tags)
	}
}
