package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestListsOrderBy: every list takes order_by, a field of its documented
// order with an optional "-"; an unknown field is a 400 naming the allowed
// fields, which the operation's description lists too.
func TestListsOrderBy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	run := "/api/v2/dags/etl/dagRuns/r1"
	var doc struct {
		Paths map[string]map[string]struct {
			Description string `json:"description"`
		} `json:"paths"`
	}
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/openapi.json", nil, &doc)
	for _, l := range []struct {
		path, route string
		order       store.Order
	}{
		{"/api/v2/dags", "/api/v2/dags", store.DagOrder},
		{"/api/v2/dags/~/dagRuns", "/api/v2/dags/{dag_id}/dagRuns", store.DagRunOrder},
		{run + "/taskInstances", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances", store.TaskInstanceOrder},
		{run + "/taskInstances/extract/xcomEntries",
			"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries", store.XComOrder},
		{"/api/v2/importErrors", "/api/v2/importErrors", store.ImportErrorOrder},
		{"/api/v2/pools", "/api/v2/pools", store.PoolOrder},
		{"/api/v2/connections", "/api/v2/connections", store.ConnectionOrder},
		{"/api/v2/assets", "/api/v2/assets", store.AssetOrder},
		{"/api/v2/assets/aliases", "/api/v2/assets/aliases", store.AssetAliasOrder},
		{"/api/v2/assets/events", "/api/v2/assets/events", store.AssetEventOrder},
		{run + "/upstreamAssetEvents", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamAssetEvents", store.AssetEventOrder},
		{"/api/v2/eventLogs", "/api/v2/eventLogs", store.AuditLogOrder},
	} {
		e.must(http.StatusOK, core.RoleAdmin, "GET", l.path+"?order_by=-"+l.order.Fields[len(l.order.Fields)-1], nil, nil)
		e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "GET", l.path+"?order_by=nope", nil,
			`order_by "nope"`, "allowed: "+strings.Join(l.order.Fields, ", "))
		if d := doc.Paths[l.route]["get"].Description; !strings.Contains(d, l.order.Doc()) {
			t.Errorf("GET %s: description %q does not list the order_by fields", l.route, d)
		}
	}
}

// TestTaskInstancesAcrossRuns: dag_run_id "~" lists the task instances of
// every run of the DAG (dag_id "~" of every DAG), paged in the database.
func TestTaskInstancesAcrossRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.trigger("r2")
	list := func(path string) ([]string, int) {
		var c api.TaskInstanceCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &c)
		out := []string{}
		for _, ti := range c.TaskInstances {
			out = append(out, ti.RunID+"/"+ti.TaskID)
		}
		return out, c.TotalEntries
	}
	for _, tc := range []struct {
		path  string
		want  []string
		total int
	}{
		{"/api/v2/dags/etl/dagRuns/~/taskInstances?limit=4",
			[]string{"r1/extract", "r1/load", "r1/transform", "r2/extract"}, 6},
		{"/api/v2/dags/etl/dagRuns/~/taskInstances?order_by=-dag_run_id&limit=2&offset=1",
			[]string{"r2/load", "r2/extract"}, 6},
		{"/api/v2/dags/etl/dagRuns/~/taskInstances?task_id=load", []string{"r1/load", "r2/load"}, 2},
		{"/api/v2/dags/~/dagRuns/r2/taskInstances?limit=1", []string{"r2/extract"}, 3},
		{"/api/v2/dags/~/dagRuns/~/taskInstances?limit=1&offset=5", []string{"r2/transform"}, 6},
	} {
		got, total := list(tc.path)
		if diff := cmp.Diff(tc.want, got); diff != "" || total != tc.total {
			t.Errorf("GET %s: total %d (want %d), (-want +got):\n%s", tc.path, total, tc.total, diff)
		}
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/nope/dagRuns/~/taskInstances", nil, `dag_id "nope"`)
}

// TestEventLogs: the audit log is readable in Airflow's shape, newest first,
// filtered, and paged by offset or by the before_id/after_id cursor.
func TestEventLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": true}, nil)
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": false}, nil)
	logs := func(query string) ([]string, int) {
		var c api.EventLogCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/eventLogs"+query, nil, &c)
		out := []string{}
		for _, l := range c.EventLogs {
			if l.Owner != "op" || l.Target != "etl" && l.Target != "etl/r1" {
				t.Errorf("event log %+v: want owner op and target etl or etl/r1", l)
			}
			out = append(out, l.Event)
		}
		return out, c.TotalEntries
	}
	got, total := logs("")
	if diff := cmp.Diff([]string{"dag.unpause", "dag.pause", "dag_run.trigger"}, got); diff != "" || total != 3 {
		t.Fatalf("event logs: total %d, (-want +got):\n%s", total, diff)
	}
	var newest api.EventLogCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/eventLogs?limit=1", nil, &newest)
	before := "?before_id=" + itoa(newest.EventLogs[0].EventLogID)
	for _, tc := range []struct {
		query string
		want  []string
		total int
	}{
		{"?event=dag.pause", []string{"dag.pause"}, 1},
		{"?owner=admin", []string{}, 0},
		{"?target=etl/r1", []string{"dag_run.trigger"}, 1},
		{"?limit=1&offset=1", []string{"dag.pause"}, 3},
		{before, []string{"dag.pause", "dag_run.trigger"}, 3},
		{before + "&limit=1", []string{"dag.pause"}, 3},
		{"?after_id=" + itoa(newest.EventLogs[0].EventLogID-2) + "&order_by=event_log_id", []string{"dag.pause", "dag.unpause"}, 3},
	} {
		got, total := logs(tc.query)
		if diff := cmp.Diff(tc.want, got); diff != "" || total != tc.total {
			t.Errorf("GET /eventLogs%s: total %d (want %d), (-want +got):\n%s", tc.query, total, tc.total, diff)
		}
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/eventLogs"+before+"&order_by=when", nil,
		"order_by event_log_id or -event_log_id")
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleViewer, "GET", "/api/v2/eventLogs?before_id=-1", nil)
}

// TestAssetEventsKeyset: after_id pages asset events forward from an id;
// total_entries stays the whole list's.
func TestAssetEventsKeyset(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{{Name: "orders", URI: "s3://orders"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}})
	var assets api.AssetCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &assets)
	var ids []int64
	for range 3 {
		var ev core.AssetEvent
		e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events", map[string]any{"asset_id": assets.Assets[0].ID}, &ev)
		ids = append(ids, ev.ID)
	}
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"?after_id=" + itoa(ids[0]) + "&limit=1", []int64{ids[1]}},
		{"?before_id=" + itoa(ids[2]) + "&order_by=-id", []int64{ids[1], ids[0]}},
		{"?after_id=" + itoa(ids[2]), []int64{}},
	} {
		var c api.AssetEventCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/events"+tc.query, nil, &c)
		got := []int64{}
		for _, ev := range c.AssetEvents {
			got = append(got, ev.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" || c.TotalEntries != 3 {
			t.Errorf("GET /assets/events%s: total %d (want 3), (-want +got):\n%s", tc.query, c.TotalEntries, diff)
		}
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/assets/events?after_id=1&order_by=timestamp", nil,
		"order_by id or -id")
}
