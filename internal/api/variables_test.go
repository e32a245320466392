package api_test

import (
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// docs/variables.md over REST, in Airflow's shapes: create, get, list,
// update, delete; a secret key's value is never answered; bad input and
// a viewer are refused with nothing changed; every change is audited.
func TestVariables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var v api.VariableResponse
	e.must(http.StatusCreated, core.RoleOp, "POST", "/api/v2/variables",
		map[string]any{"key": "region", "value": `{"name": "eu"}`, "description": "where we run"}, &v)
	if want := (api.VariableResponse{Key: "region", Value: `{"name": "eu"}`, Description: "where we run", IsEncrypted: true}); v != want {
		t.Errorf("created %+v, want %+v", v, want)
	}
	e.must(http.StatusCreated, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "api_password", "value": "hunter2"}, nil)
	for _, path := range []string{"/api/v2/variables", "/api/v2/variables/api_password"} {
		if status, b := e.call(core.RoleOp, "GET", path, nil); status != http.StatusOK || strings.Contains(string(b), "hunter2") ||
			!strings.Contains(string(b), `"***"`) {
			t.Errorf("GET %s: %d %s, want the secret masked", path, status, b)
		}
	}
	var list api.VariableCollection
	e.must(http.StatusOK, core.RoleOp, "GET", "/api/v2/variables?order_by=-key", nil, &list)
	if list.TotalEntries != 2 || list.Variables[0].Key != "region" {
		t.Errorf("list by -key: %+v", list)
	}

	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/variables/region", map[string]any{"value": "us"}, &v)
	if v.Value != "us" || v.Description != "where we run" {
		t.Errorf("patched %+v, want the value replaced and the description kept", v)
	}
	// Any JSON value is kept as its text, as Airflow's; the secrets inside
	// a JSON value are shown masked; null is refused.
	e.must(http.StatusCreated, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "cfg", "value": map[string]any{"db": map[string]any{"password": "p4ss", "host": "h"}}}, &v)
	if v.Value != `{"db":{"host":"h","password":"***"}}` {
		t.Errorf("a JSON variable with a password inside: shown %s", v.Value)
	}
	if got, err := e.st.VariableGet(t.Context(), "cfg"); err != nil || got.Value != `{"db":{"host":"h","password":"p4ss"}}` {
		t.Errorf("a JSON variable stored as %+v, %v; want its JSON text", got, err)
	}
	e.must(http.StatusCreated, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "n", "value": 42}, &v)
	if v.Value != "42" {
		t.Errorf("a number variable: %+v", v)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "z", "value": nil}, "null")
	// Airflow's update_mask: only the fields named change.
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/variables/region?update_mask=description",
		map[string]any{"key": "region", "value": "ignored", "description": "d2"}, &v)
	if v.Value != "us" || v.Description != "d2" {
		t.Errorf("patched with update_mask=description: %+v, want the value kept and the description d2", v)
	}
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/variables/region?update_mask=value&update_mask=description",
		map[string]any{"value": "eu"}, &v)
	if v.Value != "eu" || v.Description != "" {
		t.Errorf("patched with update_mask=value,description and no description: %+v, want eu and none", v)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", "/api/v2/variables/region?update_mask=key", map[string]any{"value": "x"},
		`update_mask names "key"`)
	e.mustProblem(http.StatusConflict, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "region", "value": "x"},
		`variable "region" already exists`)
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "has space", "value": "x"},
		`variable key "has space"`)
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/variables",
		map[string]any{"key": "big", "value": strings.Repeat("x", 65<<10)}, "more than the 65536 allowed")
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PATCH", "/api/v2/variables/region", map[string]any{"key": "other", "value": "x"},
		"cannot be renamed")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PATCH", "/api/v2/variables/nope", map[string]any{"value": "x"}, `variable "nope"`)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "GET", "/api/v2/variables/region", nil, "op")
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "POST", "/api/v2/variables", map[string]any{"key": "k", "value": "x"}, "op")

	if status, _ := e.call(core.RoleOp, "DELETE", "/api/v2/variables/region", nil); status != http.StatusNoContent {
		t.Errorf("delete: %d", status)
	}
	e.mustProblem(http.StatusNotFound, core.RoleOp, "GET", "/api/v2/variables/region", nil, `variable "region"`)
	for _, a := range []string{"variable.create", "variable.update", "variable.delete"} {
		if !e.hasAudit("op", a, "region") {
			t.Errorf("no audit entry %s of region: %+v", a, e.audit())
		}
	}
}

// A variable this api-server cannot decrypt (sealed under a key its key
// file lacks, or tampered with) is listed as such, and reading it is a
// 409 naming the key file, not a bare 500 (nor one a client retries).
func TestUndecryptableVariable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(http.StatusCreated, core.RoleOp, "POST", "/api/v2/variables", map[string]any{"key": "bucket", "value": "lake"}, nil)
	db := e.st.(interface{ DB() *sql.DB }).DB()
	if _, err := db.ExecContext(t.Context(), `UPDATE variable SET val = 'weir-aes256gcm:v1:k:garbage' WHERE key = 'bucket'`); err != nil {
		t.Fatal(err)
	}
	status, b := e.call(core.RoleOp, "GET", "/api/v2/variables/bucket", nil)
	if status != http.StatusConflict || !strings.Contains(string(b), "secrets_key_file") {
		t.Errorf("GET an undecryptable variable: %d %s, want 409 naming the key file", status, b)
	}
	status, b = e.call(core.RoleOp, "GET", "/api/v2/variables", nil)
	if status != http.StatusOK || !strings.Contains(string(b), `"undecryptable":`) || !strings.Contains(string(b), "set it again") {
		t.Errorf("GET /variables with an undecryptable one: %d %s, want it listed as undecryptable", status, b)
	}
	// Its description alone cannot be changed (its value would be kept
	// unread); a new value replaces it.
	e.mustProblem(http.StatusConflict, core.RoleOp, "PATCH", "/api/v2/variables/bucket?update_mask=description",
		map[string]any{"value": "", "description": "d"}, "cannot be kept")
	var v api.VariableResponse
	e.must(http.StatusOK, core.RoleOp, "PATCH", "/api/v2/variables/bucket", map[string]any{"value": "lake2"}, &v)
	if v.Value != "lake2" {
		t.Errorf("a new value over an undecryptable one: %+v", v)
	}
}
