package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, b := e.call(core.RolePublic, "GET", "/api/v2/openapi.json", nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, b)
	}
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Info    struct{ Title string }     `json:"info"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") || doc.Info.Title != "Weir API" {
		t.Errorf("openapi %q title %q, want 3.1.x and Weir API", doc.OpenAPI, doc.Info.Title)
	}
	for _, p := range []string{
		"/api/v2/health", "/api/v2/version", "/api/v2/dags", "/api/v2/dags/{dag_id}",
		"/api/v2/dags/{dag_id}/dagRuns", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/clear",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/tries",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries",
		"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries/{xcom_key}",
		"/api/v2/dags/{dag_id}/clearTaskInstances", "/api/v2/importErrors", "/api/v2/pools",
		"/api/v2/pools/{pool_name}", "/api/v2/connections", "/api/v2/connections/{connection_id}",
		"/api/v2/auth/login", "/api/v2/auth/logout",
	} {
		if _, ok := doc.Paths[p]; !ok {
			t.Errorf("openapi.json lacks path %s", p)
		}
	}
	// A log route answers a LogChunk object (Airflow's
	// TaskInstancesLogResponse) or text, not a base64 string.
	var logRoute struct {
		Get struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"get"`
	}
	if err := json.Unmarshal(doc.Paths["/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}"], &logRoute); err != nil {
		t.Fatal(err)
	}
	ok := logRoute.Get.Responses["200"]
	if ref := ok.Content["application/json"].Schema["$ref"]; ref != "#/components/schemas/LogChunk" || ok.Content["text/plain"].Schema["type"] != "string" {
		t.Errorf("the log route's 200: %+v", ok)
	}
}

func TestAuthRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "GET", "/api/v2/dags", nil, "authentication required")
	resp := e.request(core.RolePublic, "GET", "/api/v2/dags", nil, "Authorization", "Bearer weir_nope")
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("unknown token: status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp = e.request(core.RolePublic, "GET", "/api/v2/dags", nil, "Authorization", "Basic abc")
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("basic auth: status %d, want 401", resp.StatusCode)
	}
}

func TestExpiredToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret, hash := auth.NewToken()
	exp := e.clk.Now().Add(time.Hour)
	if err := e.st.APITokenCreate(t.Context(), &core.APIToken{ID: "short", Name: "short", Username: "viewer",
		Hash: hash, CreatedAt: e.clk.Now(), ExpiresAt: &exp}); err != nil {
		t.Fatal(err)
	}
	status, _ := e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Authorization", "Bearer "+secret)
	if status != http.StatusOK {
		t.Fatalf("fresh token: status %d", status)
	}
	e.clk.Advance(2 * time.Hour)
	status, b := e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Authorization", "Bearer "+secret)
	if status != http.StatusUnauthorized || !strings.Contains(string(b), "expired") {
		t.Errorf("expired token: status %d body %s", status, b)
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// viewer may read but not mutate; op may not manage pools or connections.
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl", nil, nil)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": false},
		`user "viewer" has role "viewer"`, `"op"`)
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "POST", "/api/v2/dags/etl/dagRuns", map[string]any{}, "viewer")
	e.mustProblem(http.StatusForbidden, core.RoleOp, "POST", "/api/v2/pools", map[string]any{"name": "p", "slots": 1}, `"admin"`)
	e.mustProblem(http.StatusForbidden, core.RoleOp, "GET", "/api/v2/connections", nil, `"admin"`)
	runs, err := e.st.DagRunList(t.Context(), &store.DagRunListParams{})
	if err != nil || len(runs) != 0 {
		t.Errorf("forbidden trigger created runs: %v %v", runs, err)
	}
}

func TestTokenHelpers(t *testing.T) {
	t.Parallel()
	s1, h1 := auth.NewToken()
	s2, _ := auth.NewToken()
	if !strings.HasPrefix(s1, auth.TokenPrefix) || s1 == s2 || h1 != auth.HashToken(s1) || h1 == s1 {
		t.Errorf("auth.NewToken: %q %q hash %q", s1, s2, h1)
	}
	if _, err := auth.HashPassword(""); err == nil {
		t.Error("auth.HashPassword accepted an empty password")
	}
}

func TestNewHandlerConfig(t *testing.T) {
	t.Parallel()
	if _, err := api.NewHandler(api.Config{}); err == nil {
		t.Error("NewHandler without a store succeeded")
	}
	e := newEnv(t)
	if _, err := api.NewHandler(api.Config{Store: e.st, SecretKey: []byte("short")}); err == nil || !strings.Contains(err.Error(), "SecretKey") {
		t.Errorf("short secret key: %v", err)
	}
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/nope", nil, "no API route GET /api/v2/nope")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "DELETE", "/api/v2/dags", nil, "no API route DELETE /api/v2/dags")
}
