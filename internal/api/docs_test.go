package api_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// The docs page works offline: it is rendered by the api-server from the
// OpenAPI document, loads no script and nothing from another host (its
// Content-Security-Policy forbids it), and documents every operation with
// its parameters, body fields and role.
func TestDocsPageIsSelfContained(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp := e.request(core.RolePublic, "GET", "/api/v2/docs", nil)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /api/v2/docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q, want default-src 'none'", csp)
	}
	if m := regexp.MustCompile(`(?i)<script|\bsrc=|<link|https?://|//unpkg|@import`).FindString(page); m != "" {
		t.Errorf("the docs page loads something (%q)", m)
	}
	for _, want := range []string{
		`<span class="m POST">POST</span> <span class="path">/api/v2/dags/{dag_id}/dagRuns</span> — Trigger a DAG run`,
		"role op", `<code>dag_run_id</code>`, "the partition the run is for",
		`<span class="path">/api/v2/dags</span> — List DAGs`, `<code>only_active</code>`, "maximum number of entries to return",
		`<span class="path">/api/v2/auth/token</span>`, "no login",
		`href="openapi.json"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the docs page lacks %q", want)
		}
	}
}
