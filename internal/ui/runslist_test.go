package ui_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// runAt creates a run of etl of type typ at a logical date.
func (e *env) runAt(runID string, typ core.RunType, state core.DagRunState, logical time.Time) {
	e.t.Helper()
	_, err := e.st.DagRunCreate(e.t.Context(), &store.DagRunCreateParams{DagID: "etl", RunID: runID, RunType: typ, State: state,
		LogicalDate: &logical, DagVersionID: e.dag("etl").LatestVersion, Now: e.clk.Now(),
		TaskInstances: []store.NewTaskInstance{{ID: uuid.NewString(), TaskID: "extract", MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "noop"}}})
	if err != nil {
		e.t.Fatal(err)
	}
}

// The runs list filters by state, run type and logical-date range in the
// database, pages, and refuses a bad filter with a 400 naming it.
func TestRunsList(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		day := func(d int) time.Time { return time.Date(2026, 2, d, 6, 0, 0, 0, time.UTC) }
		e.runAt("sched_1", core.RunScheduled, core.RunSuccess, day(1))
		e.runAt("sched_2", core.RunScheduled, core.RunFailed, day(2))
		e.runAt("manual_2", core.RunManual, core.RunSuccess, day(2).Add(12*time.Hour))
		e.runAt("sched_3", core.RunScheduled, core.RunRunning, day(3))
		b := e.loggedIn(core.RoleViewer)

		listed := func(path string) []string {
			t.Helper()
			r := b.get(path)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", path, r.status, r.body)
			}
			var ids []string
			for _, part := range strings.Split(r.body, `<th scope="row"><a href="/dags/etl/runs/`)[1:] {
				id, _, _ := strings.Cut(part, `"`)
				ids = append(ids, id)
			}
			return ids
		}
		for path, want := range map[string]string{
			"/dags/etl/runs":                                                "sched_3 manual_2 sched_2 sched_1",
			"/dags/etl/runs?state=success":                                  "manual_2 sched_1",
			"/dags/etl/runs?run_type=scheduled&state=all":                   "sched_3 sched_2 sched_1",
			"/dags/etl/runs?from=2026-02-02&to=2026-02-02":                  "manual_2 sched_2",
			"/dags/etl/runs?from=2026-02-02T12:00:00Z":                      "sched_3 manual_2",
			"/dags/etl/runs?run_type=manual&to=2026-02-01":                  "",
			"/dags/etl/runs?state=success&run_type=scheduled&to=2026-02-03": "sched_1",
		} {
			if got := strings.Join(listed(path), " "); got != want {
				t.Errorf("GET %s lists %q, want %q", path, got, want)
			}
		}
		page := b.get("/dags/etl/runs?state=success")
		if !strings.Contains(page.body, `<option value="success" selected>`) || !strings.Contains(page.body, "1–2 of 2") {
			t.Errorf("filtered list does not keep its filter or count:\n%s", page.body)
		}
		for _, bad := range []string{"state=done", "run_type=cron", "from=yesterday", "from=2026-02-03&to=2026-02-01"} {
			r := b.get("/dags/etl/runs?" + bad)
			name, _, _ := strings.Cut(bad, "=")
			if bad == "from=2026-02-03&to=2026-02-01" {
				name = "to must be on or after from"
			}
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, name) {
				t.Errorf("GET runs?%s: %d, want 400 naming %q:\n%s", bad, r.status, name, r.body)
			}
		}
		if r := b.get("/dags/nope/runs"); r.status != http.StatusNotFound {
			t.Errorf("runs of an unknown DAG: %d, want 404", r.status)
		}
	})
}

// The source view shows the DAG's file from the DAGs folder, and says why
// when it cannot: a file outside the folder is never read.
func TestSourceView(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		file := filepath.Join(e.dags, "inside.yaml")
		if err := os.WriteFile(file, []byte("dag_id: inside\n# <b>not markup</b>\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		outside := filepath.Join(t.TempDir(), "secret.yaml")
		if err := os.WriteFile(outside, []byte("password: hunter2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(e.dags, "link.yaml")); err != nil {
			t.Fatal(err)
		}
		task := []core.Task{{TaskID: "t", Operator: "noop"}}
		e.sync(core.DAG{DagID: "inside", FileLoc: file, Tasks: task})
		e.sync(core.DAG{DagID: "linked", FileLoc: filepath.Join(e.dags, "link.yaml"), Tasks: task})
		e.sync(core.DAG{DagID: "gocode", FileLoc: "go:weir-worker", Tasks: task})
		b := e.loggedIn(core.RoleViewer)

		r := b.get("/dags/inside/source")
		if r.status != http.StatusOK || !strings.Contains(r.body, "dag_id: inside\n# &lt;b&gt;not markup&lt;/b&gt;") {
			t.Errorf("source of inside: %d, want the file escaped:\n%s", r.status, r.body)
		}
		r = b.get("/dags/linked/source")
		if r.status != http.StatusOK || strings.Contains(r.body, "hunter2") || !strings.Contains(r.body, "outside the DAGs folder") {
			t.Errorf("source through a link leaving the folder: %d, want no content and the reason:\n%s", r.status, r.body)
		}
		r = b.get("/dags/gocode/source")
		if !strings.Contains(r.body, "defined in Go code compiled into weir-worker") || !strings.Contains(r.body, "The DAG as Weir parsed it") {
			t.Errorf("source of a Go DAG: want the reason and the parsed DAG:\n%s", r.body)
		}
	})
}
