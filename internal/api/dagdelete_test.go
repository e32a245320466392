package api_test

import (
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestDeleteDag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.setTIState("r1", "extract", core.TIRunning)
	e.mustProblem(http.StatusConflict, core.RoleOp, "DELETE", "/api/v2/dags/etl", nil, "queued, running or deferred")
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "DELETE", "/api/v2/dags/etl", nil, "")
	if _, err := e.st.DagGet(t.Context(), "etl"); err != nil {
		t.Fatalf("a refused delete removed the DAG: %v", err)
	}
	e.setTIState("r1", "extract", core.TIFailed)
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", "/api/v2/dags/etl", nil, nil)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl", nil, `"etl"`)
	if n, _ := e.st.DagRunCount(t.Context(), &store.DagRunListParams{DagID: "etl"}); n != 0 {
		t.Errorf("%d runs of the deleted DAG remain", n)
	}
	if !e.hasAudit("op", "dag.delete", "etl") {
		t.Errorf("no audit entry: %+v", e.audit())
	}
	e.mustProblem(http.StatusNotFound, core.RoleOp, "DELETE", "/api/v2/dags/etl", nil, `"etl"`)
}
