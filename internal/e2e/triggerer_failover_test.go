package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

var triggererIDLine = regexp.MustCompile(`msg="triggerer started" id=(\S+)`)

// TestTriggerersShareAndFailOverOnPostgres runs every role as its own
// process on PostgreSQL with two triggerers. Twenty deferrable sensors
// spread over both (the first has room for ten); the first is SIGKILLed,
// the second takes its triggers once its heartbeat is stale, and when the
// watched file appears every sensor resumes once, on its first try.
func TestTriggerersShareAndFailOverOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, dags, data := t.TempDir(), t.TempDir(), t.TempDir()
	var tasks strings.Builder
	for i := range 20 {
		fmt.Fprintf(&tasks, "  - task_id: s%02d\n    operator: sensor\n    trigger: {type: file, path: %q}\n    poke_interval: 1s\n",
			i, filepath.Join(data, "go.flag"))
	}
	writeFile(t, filepath.Join(dags, "many.yaml"), "dag_id: many\ntasks:\n"+tasks.String())
	env, api := startPostgresRoles(t, dsn, home, dags, "WEIR__TRIGGERER__HEARTBEAT_INTERVAL=1s")

	first := startProc(t, "triggerer A", env, "triggerer", "--home", home, "--capacity", "10")
	idA := first.WaitOutput(t, triggererIDLine)[1]
	api.WaitDAG("many")
	api.Trigger("many", "r1", nil)
	owned := func(id string) int {
		var page struct {
			TotalEntries int `json:"total_entries"`
		}
		api.Get("/api/v2/triggers?triggerer_id="+id, &page)
		return page.TotalEntries
	}
	waitFor(t, "triggerer A to run ten triggers", func() (bool, string) {
		n := owned(idA)
		return n == 10, fmt.Sprintf("A runs %d", n)
	})
	second := startProc(t, "triggerer B", env, "triggerer", "--home", home)
	idB := second.WaitOutput(t, triggererIDLine)[1]
	waitFor(t, "triggerer B to run the other ten", func() (bool, string) {
		n := owned(idB)
		return n == 10, fmt.Sprintf("B runs %d", n)
	})

	first.Signal(t, syscall.SIGKILL)
	first.WaitExit(t)
	waitFor(t, "triggerer B to take over A's triggers", func() (bool, string) {
		a, b := owned(idA), owned(idB)
		return b == 20, fmt.Sprintf("A %d, B %d", a, b)
	})
	waitFor(t, "weir jobs check to list B alive and not the killed A", func() (bool, string) {
		alive := mustWeir(t, env, "jobs", "check", "--role", "triggerer", "--threshold", "3s", "--home", home)
		return strings.Contains(alive, idB) && !strings.Contains(alive, idA), alive
	})
	var health struct {
		Triggerer struct {
			Status *string `json:"status"`
		} `json:"triggerer"`
	}
	api.Get("/api/v2/monitor/health", &health)
	if health.Triggerer.Status == nil || *health.Triggerer.Status != "healthy" {
		t.Errorf("health with B alive = %+v, want a healthy triggerer", health.Triggerer)
	}
	if err := os.WriteFile(filepath.Join(data, "go.flag"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	run := api.WaitRunDone("many", "r1")
	if run.State != core.RunSuccess {
		t.Fatalf("run = %s, want success:\n%s", run.State, api.DescribeRun("many", "r1", run))
	}
	for i := range 20 {
		task := fmt.Sprintf("s%02d", i)
		ti := api.TaskInstance("many", "r1", task)
		log := api.Log("many", "r1", task, 1)
		if ti.TryNumber != 1 || strings.Count(log, "the trigger fired") != 1 {
			t.Errorf("%s: try %d, log:\n%s\nwant one resume on try 1", task, ti.TryNumber, log)
		}
	}
}

// TestWatcherFailsOverBetweenTriggerers runs every role as its own process
// on PostgreSQL with two triggerers and one directory watcher: it runs in
// exactly one of them; when that one is SIGKILLed, the other takes the
// watcher over within two heartbeat intervals and resumes from the
// committed cursor: the files dropped before and after the kill each get
// exactly one event.
func TestWatcherFailsOverBetweenTriggerers(t *testing.T) {
	t.Parallel()
	const heartbeat = 3 * time.Second
	dsn := pgtest.DSN(t)
	home, dags, landing := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "watched.yaml"), fmt.Sprintf(`dag_id: watched
assets:
  - name: landing
    watchers:
      - name: w
        trigger: {type: directory, path: %q, poll_interval: 200ms}
tasks:
  - task_id: t
    operator: noop
`, landing))
	env, api := startPostgresRoles(t, dsn, home, dags, "WEIR__TRIGGERER__HEARTBEAT_INTERVAL="+heartbeat.String())
	procs := map[string]*proc{}
	for _, name := range []string{"A", "B"} {
		p := startProc(t, "triggerer "+name, env, "triggerer", "--home", home)
		procs[p.WaitOutput(t, triggererIDLine)[1]] = p
	}
	api.WaitDAG("watched")
	var asset struct {
		Assets []struct {
			ID int64 `json:"id"`
		} `json:"assets"`
	}
	api.Get("/api/v2/assets?name_pattern=landing", &asset)
	watcher := func() core.Watcher {
		var page struct {
			Watchers []core.Watcher `json:"watchers"`
		}
		api.Get(fmt.Sprintf("/api/v2/assets/%d/watchers", asset.Assets[0].ID), &page)
		if len(page.Watchers) != 1 {
			t.Fatalf("watchers = %+v, want one", page.Watchers)
		}
		return page.Watchers[0]
	}
	drop := func(name string) { writeFile(t, filepath.Join(landing, name), "x\n") }
	drop("before.csv")
	waitFor(t, "the watcher to record before.csv", func() (bool, string) {
		w := watcher()
		return w.Events == 1 && w.TriggererID != "", fmt.Sprintf("%+v", w)
	})
	owner := watcher().TriggererID
	killed := time.Now()
	procs[owner].Signal(t, syscall.SIGKILL)
	procs[owner].WaitExit(t)
	var moved time.Duration
	waitFor(t, "the other triggerer to take the watcher", func() (bool, string) {
		w := watcher()
		if w.TriggererID != owner && w.TriggererAlive && moved == 0 {
			moved = time.Since(killed)
		}
		return moved > 0, fmt.Sprintf("%+v", w)
	})
	t.Logf("the watcher moved %s after the SIGKILL (heartbeat interval %s)", moved.Round(10*time.Millisecond), heartbeat)
	if moved > 2*heartbeat {
		t.Errorf("the watcher moved %s after the kill, more than two heartbeat intervals (%s)", moved, 2*heartbeat)
	}
	drop("after.csv")
	waitFor(t, "the watcher to record after.csv", func() (bool, string) {
		w := watcher()
		return w.Events == 2, fmt.Sprintf("%+v", w)
	})
	var events struct {
		AssetEvents []core.AssetEvent `json:"asset_events"`
	}
	api.Get(fmt.Sprintf("/api/v2/assets/events?asset_id=%d", asset.Assets[0].ID), &events)
	var names []string
	for _, e := range events.AssetEvents {
		var x struct{ Name string }
		_ = json.Unmarshal(e.Extra, &x)
		names = append(names, x.Name)
	}
	if strings.Join(names, ",") != "before.csv,after.csv" {
		t.Errorf("events = %v, want before.csv then after.csv, once each", names)
	}
}
