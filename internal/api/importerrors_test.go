package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

func TestImportErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.st.ImportErrorSet(t.Context(), "/dags/bad.yaml", "bad.yaml:3:5: unknown field", e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	var c api.ImportErrorCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/importErrors", nil, &c)
	if c.TotalEntries != 1 || c.ImportErrors[0].Filename != "/dags/bad.yaml" || c.ImportErrors[0].Message != "bad.yaml:3:5: unknown field" {
		t.Fatalf("list: %+v", c)
	}
	var ie core.ImportError
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/importErrors/"+itoa(c.ImportErrors[0].ID), nil, &ie)
	if ie.Filename != "/dags/bad.yaml" {
		t.Errorf("get: %+v", ie)
	}
	// Airflow's ImportErrorResponse: bundle_name is there, null.
	if status, b := e.call(core.RoleViewer, "GET", "/api/v2/importErrors/"+itoa(c.ImportErrors[0].ID), nil); status != http.StatusOK ||
		!strings.Contains(string(b), `"bundle_name":null`) || !strings.Contains(string(b), `"stack_trace":"bad.yaml:3:5: unknown field"`) {
		t.Errorf("get: %d %s, want Airflow's fields", status, b)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/importErrors/999", nil, "import_error_id 999")
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleViewer, "GET", "/api/v2/importErrors/abc", nil, "")
}
