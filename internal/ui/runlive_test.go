package ui_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The run page's live part is served with an ETag: 304 while nothing
// changed, the new part (state, instances, the op's forms returning to
// the run page) after a change, never a whole page.
func TestRunPageLive(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TISuccess, core.TIQueued)
		b := e.loggedIn(core.RoleOp)
		page := b.get("/dags/etl/runs/r1")
		m := regexp.MustCompile(`data-live="([^"]+)" data-etag="([^"]+)"`).FindStringSubmatch(page.body)
		if page.status != http.StatusOK || m == nil || m[1] != "/dags/etl/runs/r1/live" {
			t.Fatalf("run page: %d, want a live part from /dags/etl/runs/r1/live:\n%s", page.status, page.body)
		}
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+m[1], nil)
		req.Header.Set("If-None-Match", strings.ReplaceAll(m[2], "&#34;", `"`))
		if r := b.do(req); r.status != http.StatusNotModified {
			t.Fatalf("live part with the page's ETag, nothing changed: %d, want 304", r.status)
		}
		e.setState("r1", "load", core.TIFailed)
		r := b.do(req)
		if r.status != http.StatusOK || r.header.Get("ETag") == "" || strings.Contains(r.body, "<html") ||
			!strings.Contains(r.body, `<tr id="task-load">`) || !strings.Contains(r.body, "✗</span> failed") {
			t.Fatalf("live part after load failed: %d; want the part with load failed:\n%s", r.status, r.body)
		}
		if !strings.Contains(r.body, `name="back" value="/dags/etl/runs/r1"`) || strings.Contains(r.body, `value="/dags/etl/runs/r1/live"`) {
			t.Error("the live part's forms do not return to the run page")
		}
		if r := b.get("/dags/etl/runs/nope/live"); r.status != http.StatusNotFound {
			t.Errorf("live part of an unknown run: %d, want 404", r.status)
		}
	})
}
