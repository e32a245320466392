package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// dagSources serves the file of a DAG inside the DAGs folder and says why
// there is none for a file outside it or an earlier version.
func TestDagSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dags := t.TempDir()
	inside := filepath.Join(dags, "inside.yaml")
	const text = "dag_id: inside\ntasks: []\n"
	if err := os.WriteFile(inside, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	e.syncDag(core.DAG{DagID: "inside", FileLoc: inside, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
	h, err := api.NewHandler(api.Config{Store: e.st, Clock: e.clk, SecretKey: []byte("0123456789abcdef0123456789abcdef"), DagsFolder: dags})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	get := func(path string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.tokens[core.RoleViewer])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	code, body := get("/api/v2/dagSources/inside")
	if code != http.StatusOK || body["content"] != text || body["dag_id"] != "inside" || body["version_number"] != 1.0 {
		t.Errorf("source of inside: %d %v", code, body)
	}
	for path, want := range map[string]string{
		"/api/v2/dagSources/etl":                     "not on this server's disk",
		"/api/v2/dagSources/inside?version_number=7": "no source per version",
		"/api/v2/dagSources/nope":                    `"nope"`,
	} {
		code, body := get(path)
		if detail, _ := body["detail"].(string); code != http.StatusNotFound || !strings.Contains(detail, want) {
			t.Errorf("GET %s: %d %v, want 404 naming %q", path, code, body, want)
		}
	}
}
