package ui_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

var dagLinkRe = regexp.MustCompile(`<th scope="row"><a href="/dags/[^"]+">([^<]+)</a>`)

// listed returns the DAG ids a DAGs page lists, in order.
func listed(page string) []string {
	var ids []string
	for _, m := range dagLinkRe.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// The list searches ids, filters by tag and by paused, and pages in the
// database with a pager that keeps the filters.
func TestDagsListFilters(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		for i := range 55 {
			e.sync(core.DAG{DagID: fmt.Sprintf("bulk_%02d", i), Tags: []string{"bulk"}, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
		}
		e.sync(core.DAG{DagID: "Sales_report", Tags: []string{"finance", "daily"}, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
		if err := st.DagSetPaused(t.Context(), "Sales_report", true); err != nil {
			t.Fatal(err)
		}
		b := e.loggedIn(core.RoleViewer)
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"q=sales", []string{"Sales_report"}},
			{"q=ET", []string{"etl"}},
			{"tag=finance", []string{"Sales_report"}},
			{"tag=fin", nil},
			{"status=paused", []string{"Sales_report"}},
			{"status=active&q=s_r", nil},
			{"tag=bulk&q=bulk_0", []string{"bulk_00", "bulk_01", "bulk_02", "bulk_03", "bulk_04", "bulk_05", "bulk_06", "bulk_07", "bulk_08", "bulk_09"}},
		} {
			r := b.get("/dags?" + c.query)
			if r.status != http.StatusOK {
				t.Fatalf("GET /dags?%s: %d", c.query, r.status)
			}
			if diff := cmp.Diff(c.want, listed(r.body)); diff != "" {
				t.Errorf("/dags?%s lists (-want +got):\n%s", c.query, diff)
			}
		}

		first := b.get("/dags?tag=bulk")
		if n := len(listed(first.body)); n != 50 || !strings.Contains(first.body, "1–50 of 55") {
			t.Fatalf("first page of 55 bulk DAGs lists %d and no \"1–50 of 55\"", n)
		}
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
		if next == nil {
			t.Fatal("first page has no next link")
		}
		second := b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
		if diff := cmp.Diff([]string{"bulk_50", "bulk_51", "bulk_52", "bulk_53", "bulk_54"}, listed(second.body)); diff != "" {
			t.Errorf("second page (-want +got):\n%s", diff)
		}
		for _, bad := range []string{"status=sleeping", "offset=-1", "offset=x"} {
			if r := b.get("/dags?" + bad); r.status != http.StatusBadRequest {
				t.Errorf("/dags?%s: %d, want 400", bad, r.status)
			}
		}
	})
}

// Each DAG shows its newest runs, oldest first, as squares whose state is
// told by an icon and a label as well as the colour; and its next run.
func TestDagsListRunsAndNextRun(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		v := e.dag("etl").LatestVersion
		states := []core.DagRunState{core.RunFailed, core.RunSuccess, core.RunRunning}
		for i := range 12 {
			r, err := st.DagRunCreate(t.Context(), &store.DagRunCreateParams{DagID: "etl", RunID: fmt.Sprintf("run_%02d", i),
				RunType: core.RunManual, State: core.RunQueued, DagVersionID: v, Now: e.clk.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.DagRunSetState(t.Context(), &store.DagRunSetStateParams{ID: r.ID, To: states[i%3], Now: e.clk.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		next := e.clk.Now().Add(90 * time.Minute)
		if err := st.DagSetNextRunAfter(t.Context(), "etl", &next); err != nil {
			t.Fatal(err)
		}
		page := e.loggedIn(core.RoleViewer).get("/dags").body
		got := regexp.MustCompile(`aria-label="run (run_\d+): ([a-z ]+)"`).FindAllStringSubmatch(page, -1)
		var runs []string
		for _, m := range got {
			runs = append(runs, m[1]+"="+m[2])
		}
		want := []string{"run_02=running", "run_03=failed", "run_04=success", "run_05=running", "run_06=failed",
			"run_07=success", "run_08=running", "run_09=failed", "run_10=success", "run_11=running"}
		if diff := cmp.Diff(want, runs); diff != "" {
			t.Errorf("last runs squares (-want +got):\n%s", diff)
		}
		if !strings.Contains(page, `<span class="sq s-failed" title="failed" role="img" aria-label="failed">✗</span>`) {
			t.Error("a failed run's square has no icon and label")
		}
		if !strings.Contains(page, ">in 1 h</time>") || !strings.Contains(page, "2026-03-01 13:30:00Z") {
			t.Error("the next run is not shown as \"in 1 h\" with its time")
		}
	})
}

// A DAG file that does not load is named in a banner with its error.
func TestDagsListImportErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t))
	b := e.loggedIn(core.RoleViewer)
	if strings.Contains(b.get("/dags").body, "could not be loaded") {
		t.Fatal("banner shown without import errors")
	}
	msg := "/dags/broken.yaml:3:7: tasks[0].operator: unknown operator \"bsh\"; allowed: bash, http, sql, noop, go"
	if err := e.st.ImportErrorSet(t.Context(), "/dags/broken.yaml", msg, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	page := b.get("/dags").body
	if !strings.Contains(page, "1 DAG file could not be loaded") ||
		!strings.Contains(page, "<code>/dags/broken.yaml:3:7: tasks[0].operator: unknown operator &#34;bsh&#34;") {
		t.Errorf("import error banner missing or without file:line:col; page:\n%s", page)
	}
}

// Static files are served under their content hash with a year-long
// immutable cache; a stale hash is not found.
func TestStaticContentHashed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t))
	b := e.browser()
	login := b.get("/login").body
	m := regexp.MustCompile(`href="(/static/[0-9a-f]+/app\.css)"`).FindStringSubmatch(login)
	if m == nil {
		t.Fatalf("login page links no hashed stylesheet:\n%s", login)
	}
	r := b.get(m[1])
	if r.status != http.StatusOK || r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/css") || !strings.Contains(r.body, ".s-success") {
		t.Errorf("GET %s: %d, Cache-Control %q, Content-Type %q", m[1], r.status, r.header.Get("Cache-Control"), r.header.Get("Content-Type"))
	}
	if r := b.get("/static/000000000000/app.css"); r.status != http.StatusNotFound {
		t.Errorf("stale hash: %d, want 404", r.status)
	}
}
