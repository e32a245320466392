package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestMultiProcessPostgresRestart restarts PostgreSQL (immediate shutdown,
// as a crash of the database) while a task runs under api-server,
// scheduler and worker processes. Every role reconnects: the running task
// reports its success, the scheduler finishes the run, and nothing ran
// twice or was lost.
func TestMultiProcessPostgresRestart(t *testing.T) {
	t.Parallel()
	db := pgtest.Private(t)
	home, dags := t.TempDir(), t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	writeFile(t, filepath.Join(dags, "dbrestart.yaml"), gatedDAG("dbrestart", gate))
	port := weirtest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{"WEIR__DATABASE__CONN=" + db.DSN(), "WEIR__API__PORT=" + strconv.Itoa(port)}

	mustWeir(t, env, "db", "migrate", "--home", home)
	mustWeir(t, env, "users", "create", "--username", "admin", "--role", "admin", "--password", "e2e-secret", "--home", home)
	startProc(t, "api-server", env, "api-server", "--home", home)
	startProc(t, "scheduler", env, "scheduler", "--home", home, "--dags", dags)
	newClient(t, base, "").WaitHealthy()
	startProc(t, "worker", env, "worker", "--home", home, "--api-url", base, "--name", "w1")
	api := login(t, base, "admin", "e2e-secret")

	api.WaitDAG("dbrestart")
	api.Trigger("dbrestart", "restart", nil)
	running := api.WaitTIState("dbrestart", "restart", "gated", core.TIRunning)

	db.Restart(t)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	api.WaitRunSuccess("dbrestart", "restart")
	for _, task := range []string{"first", "gated", "last"} {
		ti := api.TaskInstance("dbrestart", "restart", task)
		if ti.State != core.TISuccess || ti.TryNumber != 1 {
			t.Errorf("%s = %s on try %d, want success on try 1", task, ti.State, ti.TryNumber)
		}
	}
	if ti := api.TaskInstance("dbrestart", "restart", "gated"); ti.ID != running.ID {
		t.Errorf("gated finished as try %s, want the try that ran across the restart (%s)", ti.ID, running.ID)
	}
}
