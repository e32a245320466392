package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// orphanDAG's task, on try 1, starts a child that would run for minutes,
// writes both pids and waits for it; every try that gets to its end
// appends a line to completions (try 2 also says whether try 1's child
// was still running when it started). A task command that ran to
// completion twice shows as two lines.
func orphanDAG(dagID, dir string) string {
	return fmt.Sprintf(`dag_id: %[1]s
schedule: null
default_args:
  retries: 1
  retry_delay: 1s
tasks:
  - task_id: long
    operator: bash
    bash_command: |
      cd %[2]q
      if [ "$WEIR_TRY_NUMBER" = 1 ]; then
        sleep 300 & echo $! > child.pid
        echo $$ > shell.pid
        echo "try 1 waiting"
        wait
      elif kill -0 "$(cat child.pid)" 2>/dev/null; then
        echo "try $WEIR_TRY_NUMBER started while try 1 still ran" >> completions
      fi
      echo "try $WEIR_TRY_NUMBER completed" >> completions
`, dagID, dir)
}

// startOrphanRun triggers orphanDAG on s and returns the pids of try 1's
// shell and child once they run. Both are SIGKILLed when the test ends, in
// case the product left them running.
func startOrphanRun(t *testing.T, s *standalone, dagID, dir string) (shell, child int) {
	t.Helper()
	s.api.waitDAG(dagID)
	s.api.trigger(dagID, "crash", nil)
	s.api.waitTIState(dagID, "crash", "long", core.TIRunning)
	child = waitPIDFile(t, filepath.Join(dir, "child.pid"))
	shell = waitPIDFile(t, filepath.Join(dir, "shell.pid"))
	waitFor(t, "try 1's log to show it waits", func() (bool, string) {
		log := s.api.log(dagID, "crash", "long", 1)
		return strings.Contains(log, "try 1 waiting"), log
	})
	return shell, child
}

// checkOneCompletion checks that the run succeeded with its command
// completed once, by try 2, after try 1's processes were gone.
func checkOneCompletion(t *testing.T, s *standalone, dagID, dir string) {
	t.Helper()
	s.api.waitRunSuccess(dagID, "crash")
	if got := readFile(t, filepath.Join(dir, "completions")); got != "try 2 completed\n" {
		t.Errorf("completions of the task's command:\n%s\nwant only try 2's, after try 1 was gone", got)
	}
}

// TestStandaloneSIGKILLTakesItsTasks: a task's processes, the shell and
// its children, die with a SIGKILLed standalone, so the retry after the
// restart is the only try whose command completes.
func TestStandaloneSIGKILLTakesItsTasks(t *testing.T) {
	t.Parallel()
	dags, home, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "orphan.yaml"), orphanDAG("orphan", dir))
	env := []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=5s"}

	s := startStandalone(t, home, dags, env...)
	shell, child := startOrphanRun(t, s, "orphan", dir)
	s.signal(t, syscall.SIGKILL)
	s.waitExit(t)
	waitFor(t, "try 1's shell and its child to die with standalone", func() (bool, string) {
		return processGone(shell) && processGone(child), fmt.Sprintf("shell %d gone: %t, child %d gone: %t",
			shell, processGone(shell), child, processGone(child))
	})

	s = startStandalone(t, home, dags, env...)
	checkOneCompletion(t, s, "orphan", dir)
}

// TestRestartKillsLeftoverTasks: when a task's process group outlives its
// worker anyway (here its guard was killed first, so only the shell's
// parent-death signal fired and its child lived on), the restarted
// standalone kills the leftover before the retry runs.
func TestRestartKillsLeftoverTasks(t *testing.T) {
	t.Parallel()
	dags, home, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "leftover.yaml"), orphanDAG("leftover", dir))
	env := []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=5s"}

	s := startStandalone(t, home, dags, env...)
	shell, child := startOrphanRun(t, s, "leftover", dir)
	guard, err := syscall.Getpgid(child)
	if err != nil {
		t.Fatal(err)
	}
	if guard == shell || guard == s.pid() {
		t.Fatalf("the task runs in process group %d; want a group of its own, led by its guard", guard)
	}
	if err := syscall.Kill(guard, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.signal(t, syscall.SIGKILL)
	s.waitExit(t)
	waitFor(t, "try 1's shell to die with standalone", func() (bool, string) { return processGone(shell), "" })
	if processGone(child) {
		t.Fatal("try 1's child died with standalone although its guard was killed: nothing left for the restart to kill")
	}

	s = startStandalone(t, home, dags, env...)
	waitFor(t, "the restarted standalone to kill try 1's leftover child", func() (bool, string) { return processGone(child), "" })
	checkOneCompletion(t, s, "leftover", dir)
}
