package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

func TestXCom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	for _, x := range []core.XCom{
		{DagID: "etl", RunID: "r1", TaskID: "extract", MapIndex: -1, Key: "return_value", Value: json.RawMessage(`[1,2]`), Timestamp: e.clk.Now()},
		{DagID: "etl", RunID: "r1", TaskID: "extract", MapIndex: -1, Key: "rows", Value: json.RawMessage(`42`), Timestamp: e.clk.Now()},
		{DagID: "etl", RunID: "r1", TaskID: "load", MapIndex: -1, Key: "return_value", Value: json.RawMessage(`"x"`), Timestamp: e.clk.Now()},
	} {
		if err := e.st.XComSet(t.Context(), &x); err != nil {
			t.Fatal(err)
		}
	}
	var c api.XComCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract/xcomEntries", nil, &c)
	if c.TotalEntries != 2 {
		t.Errorf("list: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract/xcomEntries?map_index=3", nil, &c)
	if c.TotalEntries != 0 {
		t.Errorf("map_index=3: %+v", c)
	}
	var x core.XCom
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/extract/xcomEntries/rows", nil, &x)
	if string(x.Value) != "42" || x.Key != "rows" {
		t.Errorf("get: %+v", x)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/extract/xcomEntries/nope", nil, `XCom key "nope"`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/zz/taskInstances/extract/xcomEntries", nil, `"zz"`)
	// "~" for the task, the run or the DAG lists the entries of every one.
	for path, want := range map[string]int{
		tiBase + "/~/xcomEntries":                                       3,
		"/api/v2/dags/etl/dagRuns/~/taskInstances/load/xcomEntries":     1,
		"/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries":          3,
		"/api/v2/dags/~/dagRuns/r1/taskInstances/~/xcomEntries?limit=2": 3,
		"/api/v2/dags/~/dagRuns/r9/taskInstances/~/xcomEntries":         0,
	} {
		c = api.XComCollection{}
		e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &c)
		if c.TotalEntries != want {
			t.Errorf("GET %s: %d entries, want %d", path, c.TotalEntries, want)
		}
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/nope/dagRuns/~/taskInstances/~/xcomEntries", nil, `"nope"`)
}
