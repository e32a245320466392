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
}
