package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// TestStandaloneGracefulShutdown stops standalone with Ctrl-C (SIGINT) while
// a task runs: the task gets the grace period, is killed and marked for
// retry, the process exits cleanly, and after a restart on the same home the
// task's next try runs and the run succeeds.
func TestStandaloneGracefulShutdown(t *testing.T) {
	t.Parallel()
	dags, home := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "slow.pid")
	writeFile(t, filepath.Join(dags, "interrupted.yaml"), slowFirstTryDAG("interrupted", pidFile))
	grace := "WEIR__WORKERS__SHUTDOWN_GRACE_PERIOD=2s"

	s := startStandalone(t, home, dags, grace)
	s.api.WaitDAG("interrupted")
	s.api.Trigger("interrupted", "ctrl-c", nil)
	s.api.WaitTIState("interrupted", "ctrl-c", "slow", core.TIRunning)
	taskPID := waitPIDFile(t, pidFile)

	s.Signal(t, syscall.SIGINT)
	if code := s.WaitExit(t); code != 0 {
		t.Fatalf("standalone exited with code %d after SIGINT, want 0", code)
	}
	if out := s.Output(); !strings.Contains(out, "Weir stopped.") {
		t.Errorf("standalone did not say it stopped")
	}
	waitFor(t, "the interrupted task's process to be killed", func() (bool, string) {
		return processGone(taskPID), "pid still alive"
	})
	if out := mustWeir(t, nil, "db", "check", "--home", home); !strings.Contains(out, "up to date") {
		t.Errorf("weir db check after shutdown: %s", out)
	}

	restarted := time.Now()
	s = startStandalone(t, home, dags, grace)
	s.api.WaitRunSuccess("interrupted", "ctrl-c")
	tries := s.api.Tries("interrupted", "ctrl-c", "slow")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].TryNumber != 2 || tries[1].State != core.TISuccess {
		t.Fatalf("tries of slow = %+v, want try 1 failed and try 2 success", tries)
	}
	if end := tries[0].EndDate; end == nil || !end.Before(restarted) {
		t.Errorf("try 1 ended at %v, want it ended by the shutdown, before the restart at %v", end, restarted)
	}
	if log := s.api.Log("interrupted", "ctrl-c", "slow", 1); !strings.Contains(log, "try 1 sleeping") {
		t.Errorf("log of the interrupted try lacks its output:\n%s", log)
	}
	if log := s.api.Log("interrupted", "ctrl-c", "slow", 2); !strings.Contains(log, "try 2 finishes at once") {
		t.Errorf("log of try 2 lacks its output:\n%s", log)
	}
}
