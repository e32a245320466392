package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestMultiProcessPostgresWorkerCrash runs every role as its own process on
// one PostgreSQL database: api-server, scheduler and two workers. The worker
// running a task is SIGKILLed and its task dies with it; the scheduler
// notices its missed heartbeats, fails the try, and the other worker runs
// the retry to success.
func TestMultiProcessPostgresWorkerCrash(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, dags := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "slow.pid")
	writeFile(t, filepath.Join(dags, "handover.yaml"), slowFirstTryDAG("handover", pidFile))
	port := weirtest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{
		"WEIR__DATABASE__CONN=" + dsn,
		"WEIR__API__PORT=" + strconv.Itoa(port),
		"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=6s",
		"WEIR__WORKERS__CONCURRENCY=1",
	}

	workers, api := startWorkerPair(t, env, base, home, dags)

	api.WaitDAG("handover")
	api.Trigger("handover", "crash", nil)
	ti := api.WaitTIState("handover", "crash", "slow", core.TIRunning)
	taskPID := waitPIDFile(t, pidFile) // try 1 is really running its command
	waitFor(t, "the running try's log to be readable through the api-server", func() (bool, string) {
		log := api.Log("handover", "crash", "slow", 1)
		return strings.Contains(log, "try 1 sleeping"), fmt.Sprintf("log so far: %q", log)
	})
	victim, ok := workers[ti.WorkerID]
	if !ok {
		t.Fatalf("try 1 runs on worker %q, want w1 or w2", ti.WorkerID)
	}
	survivor := "w1"
	if ti.WorkerID == "w1" {
		survivor = "w2"
	}
	if workers[survivor].Exited() {
		t.Fatalf("worker %s exited before the crash", survivor)
	}
	victim.Signal(t, syscall.SIGKILL)
	waitFor(t, "try 1's command to die with its worker", func() (bool, string) { return processGone(taskPID), "" })

	api.WaitRunSuccess("handover", "crash")
	tries := api.Tries("handover", "crash", "slow")
	var got []string
	for _, tr := range tries {
		got = append(got, fmt.Sprintf("try %d %s on %s", tr.TryNumber, tr.State, tr.WorkerID))
	}
	if len(tries) != 2 || !failedTry(tries[0]) || tries[0].WorkerID != ti.WorkerID ||
		tries[1].TryNumber != 2 || tries[1].State != core.TISuccess || tries[1].WorkerID != survivor {
		t.Fatalf("tries of slow = %q, want try 1 failed on %s, then try 2 success on %s", got, ti.WorkerID, survivor)
	}
	if log := api.Log("handover", "crash", "slow", 2); !strings.Contains(log, "try 2 finishes at once") {
		t.Errorf("log of try 2 (on %s) lacks its output:\n%s", survivor, log)
	}
	if after := api.TaskInstance("handover", "crash", "after"); after.State != core.TISuccess || after.WorkerID != survivor {
		t.Errorf("downstream task is %s on %q, want success on %s", after.State, after.WorkerID, survivor)
	}
}

// startWorkerPair runs, with env (a PostgreSQL database and the api
// port of base), an api-server, a scheduler on dags and two workers w1 and
// w2, each its own process, after migrating and creating admin; it
// returns the workers and a client holding an API token of admin.
func startWorkerPair(t *testing.T, env []string, base, home, dags string) (map[string]*proc, *client) {
	t.Helper()
	if out := mustWeir(t, env, "db", "migrate", "--home", home); !strings.Contains(out, "postgres") {
		t.Errorf("weir db migrate did not report the PostgreSQL database: %s", out)
	}
	mustWeir(t, env, "users", "create", "--username", "admin", "--role", "admin", "--password", "e2e-secret", "--home", home)
	startProc(t, "api-server", env, "api-server", "--home", home)
	startProc(t, "scheduler", env, "scheduler", "--home", home, "--dags", dags)
	newClient(t, base, "").WaitHealthy()
	workers := map[string]*proc{}
	for _, name := range []string{"w1", "w2"} {
		workers[name] = startProc(t, "worker "+name, env, "worker", "--home", home, "--api-url", base, "--name", name)
	}
	token := strings.TrimSpace(mustWeir(t, env, "tokens", "create", "--user", "admin", "--home", home))
	return workers, newClient(t, base, token)
}

// startPostgresRoles runs, against the PostgreSQL database of dsn, one
// api-server on a free port, a scheduler on dags and a worker w1 (each its
// own process), after migrating and creating admin; it returns the roles'
// environment (extra added) and a client logged in as admin.
func startPostgresRoles(t *testing.T, dsn, home, dags string, extra ...string) ([]string, *client) {
	t.Helper()
	port := weirtest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := append([]string{"WEIR__DATABASE__CONN=" + dsn, "WEIR__API__PORT=" + strconv.Itoa(port)}, extra...)
	mustWeir(t, env, "db", "migrate", "--home", home)
	mustWeir(t, env, "users", "create", "--username", "admin", "--role", "admin", "--password", "e2e-secret", "--home", home)
	startProc(t, "api-server", env, "api-server", "--home", home)
	startProc(t, "scheduler", env, "scheduler", "--home", home, "--dags", dags)
	newClient(t, base, "").WaitHealthy()
	startProc(t, "worker", env, "worker", "--home", home, "--api-url", base, "--name", "w1")
	return env, login(t, base, "admin", "e2e-secret")
}
