package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// gatedDAG is a chain first → gated → last where gated waits until the file
// gate exists (so a test decides when it finishes).
func gatedDAG(dagID, gate string) string {
	return fmt.Sprintf(`dag_id: %s
tasks:
  - task_id: first
    operator: bash
    bash_command: echo first
  - task_id: gated
    operator: bash
    depends_on: first
    bash_command: 'while [ ! -e %q ]; do sleep 0.1; done; echo gate opened'
  - task_id: last
    operator: bash
    depends_on: gated
    bash_command: echo last
`, dagID, gate)
}

// TestMultiProcessSchedulerAndAPIServerCrash SIGKILLs the scheduler and the
// api-server (PostgreSQL) while a task runs, then starts them again: the
// worker keeps the task running, reports its success to the new api-server,
// the new scheduler continues the run, and nothing ran twice.
func TestMultiProcessSchedulerAndAPIServerCrash(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, dags := t.TempDir(), t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	writeFile(t, filepath.Join(dags, "survivor.yaml"), gatedDAG("survivor", gate))
	port := weirtest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{"WEIR__DATABASE__CONN=" + dsn, "WEIR__API__PORT=" + strconv.Itoa(port)}

	mustWeir(t, env, "db", "migrate", "--home", home)
	mustWeir(t, env, "users", "create", "--username", "admin", "--role", "admin", "--password", "e2e-secret", "--home", home)
	apiServer := startProc(t, "api-server", env, "api-server", "--home", home)
	scheduler := startProc(t, "scheduler", env, "scheduler", "--home", home, "--dags", dags)
	newClient(t, base, "").WaitHealthy()
	startProc(t, "worker", env, "worker", "--home", home, "--api-url", base, "--name", "w1")
	api := login(t, base, "admin", "e2e-secret")

	api.WaitDAG("survivor")
	api.Trigger("survivor", "restart", nil)
	running := api.WaitTIState("survivor", "restart", "gated", core.TIRunning)

	for _, p := range []*proc{scheduler, apiServer} {
		p.Signal(t, syscall.SIGKILL)
		p.WaitExit(t)
	}
	startProc(t, "api-server (restarted)", env, "api-server", "--home", home)
	startProc(t, "scheduler (restarted)", env, "scheduler", "--home", home, "--dags", dags)
	newClient(t, base, "").WaitHealthy()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	api = login(t, base, "admin", "e2e-secret") // sessions survive restarts, but log in afresh anyway
	api.WaitRunSuccess("survivor", "restart")
	for _, task := range []string{"first", "gated", "last"} {
		ti := api.TaskInstance("survivor", "restart", task)
		if ti.State != core.TISuccess || ti.TryNumber != 1 {
			t.Errorf("%s = %s on try %d, want success on try 1 (nothing re-run)", task, ti.State, ti.TryNumber)
		}
	}
	if ti := api.TaskInstance("survivor", "restart", "gated"); ti.ID != running.ID {
		t.Errorf("gated finished as try %s, want the try that was running across the restart (%s)", ti.ID, running.ID)
	}
}
