package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

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
