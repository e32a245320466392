package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

func TestConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var c api.ConnectionResponse
	e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "warehouse", "uri": "postgres://etl:hunter2@db.example:5432/dw?sslmode=require&api_token=abc"}, &c)
	var shown map[string]any
	if b, _ := json.Marshal(c); json.Unmarshal(b, &shown) != nil || !reflect.DeepEqual(shown, map[string]any{
		"connection_id": "warehouse", "conn_type": "postgres", "description": nil, "host": "db.example", "login": "etl",
		"schema": "dw", "port": 5432.0, "password": "***", "extra": `{"api_token":"***","sslmode":"require"}`,
		"uri": "postgres://etl:***@db.example:5432/dw?sslmode=require&api_token=***"}) {
		t.Errorf("created: %s, want Airflow's fields, the password and the secret extra redacted", b)
	}
	c = api.ConnectionResponse{}
	e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "api", "conn_type": "https", "host": "api.example", "login": "bot", "password": "pw", "port": 8443}, &c)
	if c.URI != "https://bot:***@api.example:8443" || c.Port == nil || *c.Port != 8443 || c.Extra != nil || c.Schema != nil {
		t.Errorf("built from fields: %+v", c)
	}

	// extra as an object or as a string holding one (Airflow's clients);
	// a nested extra is refused, saying why.
	for id, extra := range map[string]any{"pg1": map[string]any{"sslmode": "require"}, "pg2": `{"sslmode": "require"}`} {
		c = api.ConnectionResponse{}
		e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/connections",
			map[string]any{"connection_id": id, "conn_type": "postgres", "host": "db", "extra": extra}, &c)
		if c.URI != "postgres://db?sslmode=require" {
			t.Errorf("%s with extra %v: %+v", id, extra, c)
		}
	}
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "gcp", "conn_type": "gcp", "extra": map[string]any{"keyfile_dict": map[string]any{"a": 1}}},
		`extra "keyfile_dict" is a nested object or list`)
	e.mustProblem(http.StatusUnprocessableEntity, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "x", "conn_type": "http", "extra": "not json"}, "extra must be a JSON object")
	for _, id := range []string{"pg1", "pg2"} {
		if status, _ := e.call(core.RoleAdmin, "DELETE", "/api/v2/connections/"+id, nil); status != http.StatusNoContent {
			t.Fatalf("delete %s: %d", id, status)
		}
	}

	// No response ever carries a password.
	for _, path := range []string{"/api/v2/connections", "/api/v2/connections/warehouse", "/api/v2/connections/api"} {
		status, b := e.call(core.RoleAdmin, "GET", path, nil)
		if status != http.StatusOK || strings.Contains(string(b), "hunter2") || strings.Contains(string(b), `"pw"`) ||
			strings.Contains(string(b), "abc") {
			t.Errorf("GET %s: %d %s", path, status, b)
		}
	}
	var list api.ConnectionCollection
	e.must(http.StatusOK, core.RoleAdmin, "GET", "/api/v2/connections", nil, &list)
	if list.TotalEntries != 2 {
		t.Errorf("list: %+v", list)
	}

	e.mustProblem(http.StatusConflict, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "warehouse", "uri": "sqlite:///x"}, `connection_id "warehouse" already exists`)
	p := e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "bad", "uri": "postgres://u:topsecret@host:port/db"}, "uri is not a valid")
	if strings.Contains(p.text(), "topsecret") {
		t.Errorf("error echoes the password: %s", p.text())
	}
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "has space", "uri": "sqlite:///x"}, `connection_id "has space"`)
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "empty"}, "uri or conn_type")
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, "GET", "/api/v2/connections/nope", nil, `connection_id "nope"`)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "GET", "/api/v2/connections/warehouse", nil, "admin")

	status, _ := e.call(core.RoleAdmin, "DELETE", "/api/v2/connections/warehouse", nil)
	if status != http.StatusNoContent {
		t.Errorf("delete: %d", status)
	}
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, "DELETE", "/api/v2/connections/warehouse", nil, `connection_id "warehouse"`)
	if !e.hasAudit("admin", "connection.create", "warehouse") || !e.hasAudit("admin", "connection.delete", "warehouse") {
		t.Errorf("audit: %+v", e.audit())
	}
	for _, a := range e.audit() {
		if strings.Contains(a.Detail, "hunter2") {
			t.Errorf("audit entry holds the password: %+v", a)
		}
	}
}

// A PATCH applies Airflow's ConnectionBody to a connection kept as a URI:
// the fields given (those update_mask names, with one), password and extra
// replaced without a mask; a body read back with its secrets redacted
// keeps them; what cannot be applied changes nothing and says why.
func TestPatchConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const path = "/api/v2/connections/warehouse"
	e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/connections",
		map[string]any{"connection_id": "warehouse", "uri": "postgres://etl:hunter2@db.example:5432/dw?sslmode=require&api_token=abc"}, nil)
	stored := func(want string) {
		t.Helper()
		c, err := e.st.ConnectionGet(t.Context(), "warehouse")
		if err != nil || c.URI != want {
			t.Errorf("stored %+v, %v; want %s", c, err, want)
		}
	}
	var c api.ConnectionResponse
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path+"?update_mask=host",
		map[string]any{"connection_id": "warehouse", "conn_type": "postgres", "host": "db2", "login": "ignored"}, &c)
	stored("postgres://etl:hunter2@db2:5432/dw?sslmode=require&api_token=abc") // the rest of the URI as it was
	if c.Host == nil || *c.Host != "db2" || c.Password == nil || *c.Password != "***" {
		t.Errorf("answer: %+v", c)
	}
	if !e.hasAudit("admin", "connection.update", "warehouse") {
		t.Error("the update is not in the audit log")
	}

	// A connection read and sent back whole keeps its secrets.
	var read map[string]any
	e.must(http.StatusOK, core.RoleAdmin, "GET", path, nil, &read)
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path, read, nil)
	stored("postgres://etl:hunter2@db2:5432/dw?api_token=abc&sslmode=require")

	// The uri a read shows, changed and sent back alone, keeps the
	// secrets it shows as ***; a *** for a secret there is not is refused.
	shownURI, _ := read["uri"].(string)
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path, map[string]any{"uri": strings.Replace(shownURI, "@db2", "@db3", 1)}, nil)
	stored("postgres://etl:hunter2@db3:5432/dw?api_token=abc&sslmode=require")
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", path, map[string]any{"uri": "postgres://etl@db3/dw?new_token=***"},
		`"new_token" is ***, which keeps a secret the connection holds`)
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", path+"?update_mask=extra", map[string]any{"extra": map[string]any{"new_token": "***"}},
		`extra "new_token" is ***`)
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path+"?update_mask=host", map[string]any{"host": "db2", "uri": nil, "team_name": nil}, nil)
	stored("postgres://etl:hunter2@db2:5432/dw?api_token=abc&sslmode=require")
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", path, map[string]any{"team_name": "data"}, "Weir has no teams")

	// Without a mask, the fields the body gives (Airflow 3.1's: a password
	// or extra it leaves out is kept).
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path, map[string]any{"conn_type": "postgres", "port": 6432}, nil)
	stored("postgres://etl:hunter2@db2:6432/dw?api_token=abc&sslmode=require")
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path+"?update_mask=password&update_mask=extra",
		map[string]any{"password": "new", "extra": `{"sslmode": "disable"}`, "host": "ignored"}, nil)
	stored("postgres://etl:new@db2:6432/dw?sslmode=disable")
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path+"?update_mask=port", map[string]any{"port": nil}, nil)
	stored("postgres://etl:new@db2/dw?sslmode=disable")
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path+"?update_mask=host", map[string]any{"host": "::1"}, nil)
	stored("postgres://etl:new@[::1]/dw?sslmode=disable")
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", path, map[string]any{"uri": "mysql://root@mysql"}, nil)
	stored("mysql://root@mysql")

	// A field's PATCH leaves the rest of the URI as it was: repeated query
	// values, a fragment, a connection without a host (whose secrets stay
	// hidden: it keeps its scheme://).
	for _, uri := range []string{"http://h:80/p?a=1&a=2#frag", "google-cloud-platform://?credentials=SEKRIT&passphrase=PP&project=p"} {
		e.must(http.StatusOK, core.RoleAdmin, "PATCH", path, map[string]any{"uri": uri}, nil)
		e.must(http.StatusOK, core.RoleAdmin, "PATCH", path+"?update_mask=login", map[string]any{"login": nil}, nil)
		stored(uri)
	}
	if status, b := e.call(core.RoleAdmin, "GET", path, nil); status != http.StatusOK || strings.Contains(string(b), "SEKRIT") || strings.Contains(string(b), `"PP"`) {
		t.Errorf("a hostless connection's read: %d %s", status, b)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", path+"?update_mask=port", map[string]any{"port": 99999}, "a port is 0 to 65535")

	for _, tc := range []struct {
		path   string
		body   map[string]any
		status int
		says   string
	}{
		{path, map[string]any{"connection_id": "other", "conn_type": "http"}, http.StatusBadRequest, `connection_id "other" in the body is not the path's "warehouse"`},
		{path + "?update_mask=hostname", map[string]any{"host": "x"}, http.StatusBadRequest, `update_mask names "hostname"`},
		{path, map[string]any{"uri": "postgres://x", "host": "y"}, http.StatusBadRequest, "uri replaces the whole connection"},
		{path, map[string]any{"conn_type": "http", "description": "prod"}, http.StatusBadRequest, "without a description"},
		{path, map[string]any{"conn_type": ""}, http.StatusBadRequest, "conn_type: a connection needs a type"},
		{path, map[string]any{"uri": "no scheme"}, http.StatusBadRequest, "not a valid connection URI"},
		{"/api/v2/connections/nope", map[string]any{"conn_type": "http"}, http.StatusNotFound, `connection_id "nope"`},
	} {
		e.mustProblem(tc.status, core.RoleAdmin, "PATCH", tc.path, tc.body, tc.says)
	}
	e.mustProblem(http.StatusForbidden, core.RoleOp, "PATCH", path, map[string]any{"conn_type": "http"}, "")
	stored("google-cloud-platform://?credentials=SEKRIT&passphrase=PP&project=p") // what failed changed nothing
}

// Connections, variables and pools are listed by a text their id, key or
// name contains, as Airflow's *_pattern parameters.
func TestListPatterns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"warehouse_eu", "Warehouse-US", "api"} {
		e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/connections", map[string]any{"connection_id": id, "uri": "postgres://h"}, nil)
		e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/variables", map[string]any{"key": id, "value": "v"}, nil)
		e.must(http.StatusCreated, core.RoleAdmin, "POST", "/api/v2/pools", map[string]any{"name": id, "slots": 1}, nil)
	}
	var conns api.ConnectionCollection
	e.must(http.StatusOK, core.RoleAdmin, "GET", "/api/v2/connections?connection_id_pattern=WAREHOUSE", nil, &conns)
	var vars api.VariableCollection
	e.must(http.StatusOK, core.RoleAdmin, "GET", "/api/v2/variables?variable_key_pattern=house", nil, &vars)
	var pools api.PoolCollection
	e.must(http.StatusOK, core.RoleAdmin, "GET", "/api/v2/pools?pool_name_pattern=warehouse", nil, &pools)
	if conns.TotalEntries != 2 || vars.TotalEntries != 2 || pools.TotalEntries != 2 || len(pools.Pools) != 2 {
		t.Errorf("by pattern: %d connections, %d variables, %d pools; want 2 of each", conns.TotalEntries, vars.TotalEntries, pools.TotalEntries)
	}
}
