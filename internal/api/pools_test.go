package api_test

import (
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

func TestPools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var p api.PoolResponse
	e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/pools", map[string]any{"name": "db", "slots": 4, "description": "database"}, &p)
	if p.Name != "db" || p.Slots != 4 || p.OpenSlots != 4 || p.Description == nil || *p.Description != "database" {
		t.Errorf("created %+v", p)
	}
	e.mustProblem(http.StatusConflict, core.RoleAdmin, "POST", "/api/v2/pools", map[string]any{"name": "db", "slots": 9}, `pool "db" already exists`)
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleAdmin, "POST", "/api/v2/pools", map[string]any{"name": "neg", "slots": -1}, "slots")
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleAdmin, "POST", "/api/v2/pools", map[string]any{"name": "", "slots": 1}, "name")

	var c api.PoolCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/pools", nil, &c)
	if c.TotalEntries != 2 {
		t.Errorf("list: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/pools/db", nil, &p)
	if p.Slots != 4 {
		t.Errorf("get after rejected re-create: %+v", p)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/pools/nope", nil, `pool "nope"`)

	e.must(http.StatusOK, core.RoleAdmin, "PATCH", "/api/v2/pools/db", map[string]any{"slots": 2}, &p)
	if p.Slots != 2 || p.Description == nil || *p.Description != "database" {
		t.Errorf("patched %+v", p)
	}
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, "PATCH", "/api/v2/pools/nope", map[string]any{"slots": 2}, `pool "nope"`)
	// Airflow's body and update_mask: only the fields named change.
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", "/api/v2/pools/db?update_mask=slots",
		map[string]any{"name": "db", "slots": 3, "description": "ignored", "include_deferred": false}, &p)
	if p.Slots != 3 || p.Description == nil || *p.Description != "database" {
		t.Errorf("patched with update_mask=slots: %+v", p)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", "/api/v2/pools/db?update_mask=size", map[string]any{"slots": 2}, `update_mask names "size"`)
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", "/api/v2/pools/db", map[string]any{"name": "db2"}, "a pool is not renamed")
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", "/api/v2/pools/db", map[string]any{"include_deferred": true}, "only false")

	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "DELETE", "/api/v2/pools/default_pool", nil, "default_pool")
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, "DELETE", "/api/v2/pools/nope", nil, `pool "nope"`)
	status, _ := e.call(core.RoleAdmin, "DELETE", "/api/v2/pools/db", nil)
	if status != http.StatusNoContent {
		t.Errorf("delete: status %d", status)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/pools/db", nil, `pool "db"`)
	for _, a := range []string{"pool.create", "pool.update", "pool.delete"} {
		if !e.hasAudit("admin", a, "db") {
			t.Errorf("no %s audit entry: %+v", a, e.audit())
		}
	}
}
