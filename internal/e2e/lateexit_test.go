package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// lateExitDAG's task records its run, then has a child SIGKILL the worker
// (standalone) a second after the task's shell has exited 0, while the
// worker still waits for the child's share of the output: the worker dies
// knowing the command ran but not how it ended.
func lateExitDAG(dagID, ledger string) string {
	return fmt.Sprintf(`dag_id: %s
tasks:
  - task_id: late
    operator: bash
    retries: 1
    bash_command: |
      echo "try $WEIR_TRY_NUMBER" >> %q
      worker=$PPID
      (sleep 1; kill -9 "$worker") &
`, dagID, ledger)
}

// TestRestartReportsWhatTheDeadWorkerFinished: a task command that exited
// 0 just before its worker died is reported a success by the restarted
// worker, on its first try, and is not run again.
func TestRestartReportsWhatTheDeadWorkerFinished(t *testing.T) {
	t.Parallel()
	dags, home := t.TempDir(), t.TempDir()
	ledger := filepath.Join(t.TempDir(), "ledger")
	writeFile(t, filepath.Join(dags, "lateexit.yaml"), lateExitDAG("lateexit", ledger))

	s := startStandalone(t, home, dags)
	s.api.WaitDAG("lateexit")
	s.api.Trigger("lateexit", "r1", nil)
	s.WaitExit(t) // killed by the task's child
	if got := readFile(t, ledger); got != "try 1\n" {
		t.Fatalf("before the restart the command ran as %q, want try 1 once", got)
	}

	s = startStandalone(t, home, dags)
	s.api.WaitRunSuccess("lateexit", "r1")
	tries := s.api.Tries("lateexit", "r1", "late")
	if len(tries) != 1 || tries[0].TryNumber != 1 || tries[0].State != core.TISuccess {
		t.Errorf("tries of late = %+v, want try 1 success alone", tries)
	}
	if got := readFile(t, ledger); got != "try 1\n" {
		t.Errorf("the command ran as %q, want try 1 once", got)
	}
}
