package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// orphanCase is a standalone running orphanDAG's try 1.
type orphanCase struct {
	dags, home, dir string
	env             []string
	s               *standalone
	shell, child    int // try 1's shell and its child
}

// startOrphanRun starts standalone with orphanDAG and triggers it; it
// returns once try 1's shell and child run. Both are SIGKILLed when the
// test ends, in case the product left them running.
func startOrphanRun(t *testing.T, dagID string) *orphanCase {
	t.Helper()
	c := &orphanCase{dags: t.TempDir(), home: t.TempDir(), dir: t.TempDir(),
		env: []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=5s"}}
	writeFile(t, filepath.Join(c.dags, dagID+".yaml"), orphanDAG(dagID, c.dir))
	c.s = startStandalone(t, c.home, c.dags, c.env...)
	c.s.api.WaitDAG(dagID)
	c.s.api.Trigger(dagID, "crash", nil)
	c.s.api.WaitTIState(dagID, "crash", "long", core.TIRunning)
	c.child = waitPIDFile(t, filepath.Join(c.dir, "child.pid"))
	c.shell = waitPIDFile(t, filepath.Join(c.dir, "shell.pid"))
	waitFor(t, "try 1's log to show it waits", func() (bool, string) {
		log := c.s.api.Log(dagID, "crash", "long", 1)
		return strings.Contains(log, "try 1 waiting"), log
	})
	return c
}

// crash SIGKILLs standalone, the weir process only, as in a real crash.
func (c *orphanCase) crash(t *testing.T) {
	t.Helper()
	c.s.Signal(t, syscall.SIGKILL)
	c.s.WaitExit(t)
}

// restart starts standalone again on the same home.
func (c *orphanCase) restart(t *testing.T) {
	t.Helper()
	c.s = startStandalone(t, c.home, c.dags, c.env...)
}

// checkOneCompletion checks that the run succeeded with its command
// completed once, by try 2, after try 1's processes were gone.
func (c *orphanCase) checkOneCompletion(t *testing.T, dagID string) {
	t.Helper()
	c.s.api.WaitRunSuccess(dagID, "crash")
	if got := readFile(t, filepath.Join(c.dir, "completions")); got != "try 2 completed\n" {
		t.Errorf("completions of the task's command:\n%s\nwant only try 2's, after try 1 was gone", got)
	}
}

// TestStandaloneSIGKILLTakesItsTasks: a task's processes, the shell and
// its children, die with a SIGKILLed standalone, so the retry after the
// restart is the only try whose command completes; the dead worker's
// private folder (its tries' tokens) is removed by the restarted one.
func TestStandaloneSIGKILLTakesItsTasks(t *testing.T) {
	t.Parallel()
	c := startOrphanRun(t, "orphan")
	dead := c.s.PID()
	c.crash(t)
	waitFor(t, "try 1's shell and its child to die with standalone", func() (bool, string) {
		return processGone(c.shell) && processGone(c.child), fmt.Sprintf("shell %d gone: %t, child %d gone: %t",
			c.shell, processGone(c.shell), c.child, processGone(c.child))
	})
	if left := workerFolders(t, c.home, dead); len(left) != 1 {
		t.Fatalf("private folders of the killed worker: %v; want its one folder left by the crash", left)
	}
	c.restart(t)
	c.checkOneCompletion(t, "orphan")
	if left := workerFolders(t, c.home, dead); len(left) != 0 {
		t.Errorf("the killed worker's private folder outlived the restart: %v", left)
	}
}

// workerFolders lists the private folders of worker process pid under home.
func workerFolders(t *testing.T, home string, pid int) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(home, "run", "workers", strconv.Itoa(pid)+"-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestRestartKillsLeftoverTasks: when a task's process group outlives its
// worker anyway (here the worker's guard was killed first, so only the
// shell's parent-death signal fired and its child lived on), the restarted
// standalone kills the leftover before the retry runs.
func TestRestartKillsLeftoverTasks(t *testing.T) {
	t.Parallel()
	c := startOrphanRun(t, "leftover")
	pgid, err := syscall.Getpgid(c.child)
	if err != nil {
		t.Fatal(err)
	}
	if pgid != c.shell {
		t.Fatalf("the task runs in process group %d; want a group of its own, led by its shell %d", pgid, c.shell)
	}
	guard := guardOf(t, c.s.PID())
	if err := syscall.Kill(guard, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.crash(t)
	waitFor(t, "try 1's shell to die with standalone", func() (bool, string) { return processGone(c.shell), "" })
	if processGone(c.child) {
		t.Fatal("try 1's child died with standalone although its guard was killed: nothing left for the restart to kill")
	}
	c.restart(t)
	waitFor(t, "the restarted standalone to kill try 1's leftover child", func() (bool, string) { return processGone(c.child), "" })
	c.checkOneCompletion(t, "leftover")
}

// guardOf returns the pid of the task guard of the worker process pid: its
// child running the guard's shell script (taskproc).
func guardOf(t *testing.T, pid int) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range procs {
		b, err := os.ReadFile(stat) //nolint:gosec // /proc
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue // not a child of pid
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline"))
		if strings.Contains(string(cmdline), "kill -9 -") {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
			return child
		}
	}
	t.Fatalf("worker process %d has no task guard", pid)
	return 0
}
