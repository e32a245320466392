package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// TestStandaloneSurvivesSIGKILL kills standalone (SQLite) with SIGKILL while
// a task runs. The task dies with it; nothing committed is lost: the
// database checks clean, an earlier finished run is intact, and after a
// restart the scheduler finds
// the orphaned try by its missing heartbeats, fails it, and the retry lets
// the run succeed.
func TestStandaloneSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	dags, home := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "slow.pid")
	writeFile(t, filepath.Join(dags, "killed.yaml"), slowFirstTryDAG("killed", pidFile))
	writeFile(t, filepath.Join(dags, "quick.yaml"), "dag_id: quick\ntasks:\n  - task_id: a\n    operator: noop\n")
	env := []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=5s"}

	s := startStandalone(t, home, dags, env...)
	s.api.WaitDAG("quick")
	s.api.Trigger("quick", "before-crash", nil)
	s.api.WaitRunSuccess("quick", "before-crash")
	s.api.WaitDAG("killed")
	s.api.Trigger("killed", "sigkill", nil)
	s.api.WaitTIState("killed", "sigkill", "slow", core.TIRunning)
	taskPID := waitPIDFile(t, pidFile)
	// What the log showed while the task ran must survive the crash.
	waitFor(t, "the running try's log to show its output", func() (bool, string) {
		log := s.api.Log("killed", "sigkill", "slow", 1)
		return strings.Contains(log, "try 1 sleeping"), log
	})

	s.Signal(t, syscall.SIGKILL) // the weir process only, as in a real crash
	s.WaitExit(t)
	waitFor(t, "the task to die with standalone", func() (bool, string) { return processGone(taskPID), "" })
	if out := mustWeir(t, nil, "db", "check", "--home", home); !strings.Contains(out, "up to date") {
		t.Errorf("weir db check after SIGKILL: %s", out)
	}

	s = startStandalone(t, home, dags, env...)
	if run := s.api.Run("quick", "before-crash"); run.State != core.RunSuccess {
		t.Errorf("run finished before the crash is %s after it, want success", run.State)
	}
	s.api.WaitRunSuccess("killed", "sigkill")
	tries := s.api.Tries("killed", "sigkill", "slow")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].TryNumber != 2 || tries[1].State != core.TISuccess {
		t.Fatalf("tries of slow = %+v, want try 1 failed (dead worker) and try 2 success", tries)
	}
	if log := s.api.Log("killed", "sigkill", "slow", 1); !strings.Contains(log, "try 1 sleeping") {
		t.Errorf("the killed try's log lost its output:\n%s", log)
	}
}
