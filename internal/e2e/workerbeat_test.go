package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestWorkerSIGKILLFailsOverWithinTwoBeats runs every role as its own
// process on PostgreSQL, the workers heartbeating every second and the
// per-try heartbeat timeout ten minutes. The worker running a task is
// SIGKILLed: it stops heartbeating as a worker, so the scheduler fails its
// try over after two of its heartbeat intervals — long before the per-try
// timeout, which this test's waits could never outlast — and the other
// worker runs the retry to success. The time from the kill to the
// failover is printed (docs/benchmarks.md records it).
func TestWorkerSIGKILLFailsOverWithinTwoBeats(t *testing.T) {
	t.Parallel()
	workerFailover(t, syscall.SIGKILL, "SIGKILL")
}

// TestStoppedWorkerHoldsNoWork is the same with SIGSTOP: a stopped worker
// holds its try only two heartbeats, and nothing queued waits for it (the
// run completes on the other worker). Once continued, it is told its try
// is no longer its own and kills the try's command.
func TestStoppedWorkerHoldsNoWork(t *testing.T) {
	t.Parallel()
	workerFailover(t, syscall.SIGSTOP, "SIGSTOP")
}

// workerFailover sends the worker running a try sig (named name), then
// waits for the try to fail over and its retry to succeed elsewhere.
func workerFailover(t *testing.T, sig syscall.Signal, name string) {
	dsn := pgtest.DSN(t)
	home, dags := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "slow.pid")
	writeFile(t, filepath.Join(dags, "beats.yaml"), slowFirstTryDAG("beats", pidFile))
	port := weirtest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{
		"WEIR__DATABASE__CONN=" + dsn,
		"WEIR__API__PORT=" + strconv.Itoa(port),
		"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=10m",
		"WEIR__WORKERS__HEARTBEAT_INTERVAL=1s",
		"WEIR__WORKERS__CONCURRENCY=1",
	}
	workers, api := startWorkerPair(t, env, base, home, dags)

	api.WaitDAG("beats")
	api.Trigger("beats", "kill", nil)
	ti := api.WaitTIState("beats", "kill", "slow", core.TIRunning)
	taskPID := waitPIDFile(t, pidFile)
	victim, ok := workers[ti.WorkerID]
	if !ok {
		t.Fatalf("try 1 runs on worker %q, want w1 or w2", ti.WorkerID)
	}
	victim.Signal(t, sig)
	signalled := time.Now()
	waitFor(t, "try 1 to be failed over", func() (bool, string) {
		cur := api.TaskInstance("beats", "kill", "slow")
		return cur.TryNumber > 1 || cur.State != core.TIRunning, fmt.Sprintf("try %d %s", cur.TryNumber, cur.State)
	})
	t.Logf("worker %s → its try failed over in %s ([workers] heartbeat_interval 1s, task_instance_heartbeat_timeout 10m)",
		name, time.Since(signalled).Round(10*time.Millisecond))

	api.WaitRunSuccess("beats", "kill")
	tries := api.Tries("beats", "kill", "slow")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[0].WorkerID != ti.WorkerID || tries[1].State != core.TISuccess ||
		tries[1].WorkerID == ti.WorkerID {
		t.Fatalf("tries of slow = %+v, want try 1 failed on %s, then try 2 success on the other worker", tries, ti.WorkerID)
	}
	if sig == syscall.SIGSTOP {
		victim.Signal(t, syscall.SIGCONT)
	}
	waitFor(t, "try 1's command to die with its worker", func() (bool, string) { return processGone(taskPID), "" })
}
