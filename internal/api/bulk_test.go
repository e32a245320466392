package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// A bulk PATCH does Airflow's create, update and delete actions in order:
// a key that exists (create) or does not (update, delete) fails its whole
// action under fail, is left out under skip, is replaced under overwrite;
// each entity's own error is its own; each change is audited.
func TestBulkVariables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(http.StatusCreated, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "region", "value": "eu"}, nil)
	var res api.BulkResponse
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/variables", map[string]any{"actions": []any{
		map[string]any{"action": "create", "entities": []any{map[string]any{"key": "region", "value": "us"}, map[string]any{"key": "a", "value": "1"}}},
		map[string]any{"action": "create", "action_on_existence": "skip",
			"entities": []any{map[string]any{"key": "region", "value": "us"}, map[string]any{"key": "b", "value": map[string]int{"n": 2}}}},
		map[string]any{"action": "update", "entities": []any{map[string]any{"key": "region", "value": "ap", "description": "where"}, map[string]any{"key": "nope", "value": "x"}}},
		map[string]any{"action": "update", "action_on_non_existence": "skip", "entities": []any{map[string]any{"key": "region", "value": "ap", "description": "where"}, map[string]any{"key": "nope", "value": "x"}}},
		map[string]any{"action": "update", "entities": []any{map[string]any{"key": "region", "value": "sa"}}},
		map[string]any{"action": "create", "action_on_existence": "overwrite", "entities": []any{map[string]any{"key": "b", "value": "3"}, map[string]any{"key": "bad key!", "value": "x"}}},
		map[string]any{"action": "delete", "entities": []string{"b", "gone"}},
		map[string]any{"action": "delete", "action_on_non_existence": "skip", "entities": []string{"b", "gone"}},
	}}, &res)
	if res.Create == nil || !slices.Equal(res.Create.Success, []string{"b", "b"}) || len(res.Create.Errors) != 2 ||
		res.Create.Errors[0].StatusCode != http.StatusConflict || res.Create.Errors[1].StatusCode != http.StatusBadRequest {
		t.Errorf("create: %+v", res.Create)
	}
	if res.Update == nil || !slices.Equal(res.Update.Success, []string{"region", "region"}) || len(res.Update.Errors) != 1 ||
		res.Update.Errors[0].StatusCode != http.StatusNotFound {
		t.Errorf("update: %+v", res.Update)
	}
	if res.Delete == nil || !slices.Equal(res.Delete.Success, []string{"b"}) || len(res.Delete.Errors) != 1 {
		t.Errorf("delete: %+v", res.Delete)
	}
	var region api.VariableResponse
	e.must(http.StatusOK, core.RoleOp, "GET", "/api/v2/variables/region", nil, &region)
	if region.Value != "sa" || region.Description != "where" {
		t.Errorf("region: %+v, want sa, its description kept by the last update (the first failed whole)", region)
	}
	for _, gone := range []string{"a", "b"} {
		e.mustProblem(http.StatusNotFound, core.RoleOp, "GET", "/api/v2/variables/"+gone, nil, gone)
	}
	if !e.hasAudit("op", "variable.update", "region") || !e.hasAudit("op", "variable.delete", "b") {
		t.Error("the bulk changes are not audited")
	}
	// A body that does not read is refused whole.
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", "/api/v2/variables", map[string]any{"actions": []any{
		map[string]any{"action": "create", "entities": []any{map[string]any{"key": "c", "value": "1"}}},
		map[string]any{"action": "delete", "entities": []any{map[string]any{"key": "c"}}},
	}}, "actions[1]: a delete's entities are the variables' keys")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "GET", "/api/v2/variables/c", nil, "c")
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PATCH", "/api/v2/variables", map[string]any{"actions": []any{
		map[string]any{"action": "delete", "entities": []string{"region"}}}}, "")
}

// Pools and connections take the same bulk actions.
func TestBulkPoolsAndConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var res api.BulkResponse
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", "/api/v2/pools", map[string]any{"actions": []any{
		map[string]any{"action": "create", "entities": []any{map[string]any{"name": "gpu", "slots": 2}, map[string]any{"name": "db", "slots": 4, "include_deferred": true}}},
		map[string]any{"action": "update", "entities": []any{map[string]any{"name": "gpu", "slots": 3}}},
		map[string]any{"action": "delete", "entities": []string{"default_pool"}},
	}}, &res)
	if !slices.Equal(res.Create.Success, []string{"gpu"}) || len(res.Create.Errors) != 1 || !slices.Equal(res.Update.Success, []string{"gpu"}) ||
		len(res.Delete.Errors) != 1 || res.Delete.Errors[0].StatusCode != http.StatusBadRequest {
		t.Errorf("pools: %+v %+v %+v", res.Create, res.Update, res.Delete)
	}
	var gpu api.PoolResponse
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/pools/gpu", nil, &gpu)
	if gpu.Slots != 3 {
		t.Errorf("gpu: %+v", gpu)
	}

	res = api.BulkResponse{}
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", "/api/v2/connections", map[string]any{"actions": []any{
		map[string]any{"action": "create", "entities": []any{
			map[string]any{"connection_id": "wh", "conn_type": "postgres", "host": "db", "login": "etl", "password": "pw"},
			map[string]any{"connection_id": "api", "uri": "https://api.example"}}},
		map[string]any{"action": "update", "entities": []any{map[string]any{"connection_id": "wh", "conn_type": "postgres", "host": "db2", "password": "***"}}},
	}}, &res)
	if !slices.Equal(res.Create.Success, []string{"wh", "api"}) || !slices.Equal(res.Update.Success, []string{"wh"}) {
		t.Errorf("connections: %+v %+v", res.Create, res.Update)
	}
	c, err := e.st.ConnectionGet(t.Context(), "wh")
	if err != nil || c.URI != "postgres://etl:pw@db2" {
		t.Errorf("wh: %+v, %v; want its password kept", c, err)
	}
}
