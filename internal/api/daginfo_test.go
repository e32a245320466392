package api_test

import (
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Airflow's dags/{id}/tasks, dagVersions and dagStats routes.
func TestTasksVersionsAndStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var tasks api.TaskCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/tasks", nil, &tasks)
	if tasks.TotalEntries != 3 || tasks.Tasks[0].TaskID != "extract" || tasks.Tasks[1].DownstreamTaskIDs[0] != "load" {
		t.Errorf("tasks = %+v", tasks)
	}
	var task api.TaskResponse
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/tasks/transform", nil, &task)
	if task.Retries != 2 || task.RetryDelay != "1m0s" || task.UpstreamTaskIDs[0] != "extract" {
		t.Errorf("task transform = %+v", task)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/tasks/nope", nil, `no task "nope"`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/nope/tasks", nil, `"nope"`)

	changed := etlDAG()
	changed.Description = "v2"
	e.syncDag(changed)
	var versions api.DagVersionCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagVersions?order_by=-version_number", nil, &versions)
	if versions.TotalEntries != 2 || versions.DagVersions[0].VersionNumber != 2 || versions.DagVersions[0].DagID != "etl" {
		t.Errorf("versions = %+v", versions)
	}
	var v api.DagVersionResponse
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagVersions/1", nil, &v)
	if v.VersionNumber != 1 || v.BundleName != nil {
		t.Errorf("version 1 = %+v", v)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/dagVersions/7", nil, "version_number 7")
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/dags/etl/dagVersions?order_by=hash", nil, "version_number")

	e.syncDag(core.DAG{DagID: "other", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
	r1 := e.trigger("r1")
	e.trigger("r2")
	if _, err := e.st.DagRunSetState(t.Context(), &store.DagRunSetStateParams{ID: r1.ID, To: core.RunFailed, Now: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	var stats api.DagStatsCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dagStats?dag_ids=etl&dag_ids=other&dag_ids=nope", nil, &stats)
	if stats.TotalEntries != 2 || len(stats.Dags) != 2 || stats.Dags[0].DagID != "etl" {
		t.Fatalf("stats = %+v", stats)
	}
	want := []api.DagStatsState{{State: core.RunQueued, Count: 1}, {State: core.RunRunning}, {State: core.RunSuccess}, {State: core.RunFailed, Count: 1}}
	for i, w := range want {
		if stats.Dags[0].Stats[i] != w {
			t.Errorf("etl stats = %+v, want %+v", stats.Dags[0].Stats, want)
			break
		}
	}
	if stats.Dags[1].Stats[0].Count != 0 {
		t.Errorf("other's stats = %+v, want zeros", stats.Dags[1].Stats)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dagStats?limit=1", nil, &stats)
	if stats.TotalEntries != 2 || len(stats.Dags) != 1 {
		t.Errorf("a page of one of every active DAG's stats = %+v", stats)
	}
}
