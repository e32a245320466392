package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
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
	_, api := startPostgresRoles(t, db.DSN(), home, dags)

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

// TestRoleStartsBeforeTheDatabase: a role started while PostgreSQL is down
// (a restart, or roles started before the database) waits for it, saying
// so, instead of exiting; once the database is back it starts.
func TestRoleStartsBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.Private(t)
	home := t.TempDir()
	env := []string{"WEIR__DATABASE__CONN=" + db.DSN()}
	mustWeir(t, env, "db", "migrate", "--home", home)
	db.Stop(t)
	p := startProc(t, "triggerer", env, "triggerer", "--home", home)
	p.WaitOutput(t, regexp.MustCompile(`the database is unreachable; retrying(?s:.*)the database is unreachable; retrying`))
	db.Start(t)
	p.WaitOutput(t, triggererIDLine)
}
