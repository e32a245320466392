package taskproc

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/proctest"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// helperEnv makes the test binary act as a worker that starts one long task
// in the folder it names, then waits to be killed.
const helperEnv = "TASKPROC_TEST_WORKER_DIR"

// taskScript starts a child, writes both pids, and would write a marker
// after five minutes: the marker appearing means the task outlived its
// worker.
const taskScript = `sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait; touch finished`

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(fakeWorker(dir))
	}
	if dir := os.Getenv(outcomesEnv); dir != "" {
		os.Exit(recordOutcomes(dir))
	}
	if arg := os.Getenv(crashEnv); arg != "" {
		os.Exit(crashingWorker(arg))
	}
	if mode := os.Getenv(ownGroupEnv); mode != "" {
		os.Exit(signalTasks(mode))
	}
	os.Exit(m.Run())
}

// helper is the test binary acting as the helper process that the
// variable env set to value selects (TestMain).
func helper(env, value string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+value)
	return cmd
}

// helperExit is a helper process's exit status: 1 after writing err to
// dir/error for the test to show (helperError), or 0.
func helperExit(dir string, err error) int {
	if err == nil {
		return 0
	}
	_ = os.WriteFile(filepath.Join(dir, "error"), []byte(err.Error()), 0o600)
	return 1
}

// helperError returns what a helper wrote to dir/error, or "".
func helperError(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "error"))
	return string(b)
}

// earlyGuard, a file in a fake worker's folder, makes it start its guard
// (StartGuard) before its task.
const earlyGuard = "early-guard"

// fakeWorker starts taskScript in dir and waits for it; a failure goes to
// dir/error.
func fakeWorker(dir string) int {
	l, err := OpenLedger(filepath.Join(dir, "groups"))
	early := 0
	if _, serr := os.Stat(filepath.Join(dir, earlyGuard)); serr == nil && err == nil {
		if err = StartGuard(); err == nil {
			early = guardPID()
		}
	}
	if err == nil {
		cmd := exec.Command("bash", "-c", taskScript)
		cmd.Dir = dir
		if _, err = Start(cmd, l); err == nil && early != 0 && guardPID() != early {
			err = fmt.Errorf("the task started guard %d, though guard %d ran", guardPID(), early)
		}
		if err == nil {
			_ = os.WriteFile(filepath.Join(dir, "guard.pid"), []byte(strconv.Itoa(guardPID())), 0o600)
			_ = cmd.Wait()
			return 0
		}
	}
	return helperExit(dir, err)
}

// guardPID is the pid of this process's guard.
func guardPID() int {
	f, _ := lifeline()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.guard.Process.Pid
}

// worker is a fake worker process running taskScript.
type worker struct {
	dir                       string
	cmd                       *exec.Cmd
	shell, child, pgid, guard int
}

func startWorker(t *testing.T) *worker {
	t.Helper()
	return startWorkerIn(t, t.TempDir())
}

// startWorkerIn starts a fake worker in dir (which may hold earlyGuard).
func startWorkerIn(t *testing.T, dir string) *worker {
	t.Helper()
	cmd := helper(helperEnv, dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{dir: dir, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for _, pid := range []int{w.pgid, w.shell, w.child, w.guard} {
			if pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	var ok bool
	wait.Until(t, time.Minute, "the task to write its pids", func() bool {
		if e := helperError(dir); e != "" {
			t.Fatalf("the fake worker could not start its task: %s", e)
		}
		w.shell, ok = proctest.ReadPID(filepath.Join(dir, "shell.pid"))
		if !ok {
			return false
		}
		if w.child, ok = proctest.ReadPID(filepath.Join(dir, "child.pid")); !ok {
			return false
		}
		w.guard, ok = proctest.ReadPID(filepath.Join(dir, "guard.pid"))
		return ok
	})
	pgid, err := syscall.Getpgid(w.child)
	if err != nil {
		t.Fatal(err)
	}
	w.pgid = pgid
	if pgid != w.shell {
		t.Fatalf("task process group %d: want its own group led by the task's shell (%d), not the worker's (%d)", pgid, w.shell, w.cmd.Process.Pid)
	}
	return w
}

func (w *worker) sigkill(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
}

// records counts the running task groups the fake worker's folder holds.
func (w *worker) records(t *testing.T) int {
	t.Helper()
	return len(held(t, filepath.Join(w.dir, "groups")).groups)
}

// A task's whole process group, children of the shell included, dies with
// its worker's SIGKILL: the command never finishes.
func TestTaskGroupDiesWithWorker(t *testing.T) {
	t.Parallel()
	w := startWorker(t)
	if n := w.records(t); n != 1 {
		t.Fatalf("%d records of running task groups, want 1", n)
	}
	w.sigkill(t)
	wait.Until(t, time.Minute, "the task's shell and its child to die with the worker", func() bool {
		return !proctest.Alive(w.shell) && !proctest.Alive(w.child) && !proctest.Alive(w.pgid)
	})
	if _, err := os.Stat(filepath.Join(w.dir, "finished")); err == nil {
		t.Error("the task's command ran to completion after its worker was killed")
	}
	// The record outlives the worker; the next life finds nothing to kill.
	left, err := KillLeftovers(filepath.Join(w.dir, "groups"))
	if err != nil || len(left) != 0 {
		t.Errorf("KillLeftovers = %+v, %v; want nothing left to kill", left, err)
	}
	if n := w.records(t); n != 0 {
		t.Errorf("%d records left after KillLeftovers, want 0", n)
	}
}

// A guard started ahead of the first task (a worker's start) learns the
// task's group and kills it when the worker dies: the task does not start
// a second guard.
func TestTaskGroupDiesWithWorkerWhoseGuardStartedFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, earlyGuard), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := startWorkerIn(t, dir)
	w.sigkill(t)
	wait.Until(t, time.Minute, "the task's shell and its child to die with the worker", func() bool {
		return !proctest.Alive(w.shell) && !proctest.Alive(w.child) && !proctest.Alive(w.guard)
	})
}

// A restarted worker kills what a previous life left running (here its
// guard was killed first, so the shell's child escaped the worker's death) and
// leaves a live worker's groups alone.
func TestKillLeftoversOfPreviousLife(t *testing.T) {
	t.Parallel()
	w := startWorker(t)
	groups := filepath.Join(w.dir, "groups")
	if left, err := KillLeftovers(groups); err != nil || len(left) != 0 {
		t.Fatalf("KillLeftovers while the worker lives = %+v, %v; want its group left alone", left, err)
	}
	if !proctest.Alive(w.child) || w.records(t) != 1 {
		t.Fatal("KillLeftovers touched a live worker's task group")
	}

	if err := syscall.Kill(w.guard, syscall.SIGKILL); err != nil { // the guard alone
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, "the guard to die", func() bool { return !proctest.Alive(w.guard) })
	w.sigkill(t)
	wait.Until(t, time.Minute, "the task's shell to die by its parent-death signal", func() bool { return !proctest.Alive(w.shell) })
	if !proctest.Alive(w.child) {
		t.Fatal("the shell's child died without its guard; the test needs a leftover")
	}

	left, err := KillLeftovers(groups)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].PGID != w.pgid || !slices.Contains(left[0].Killed, w.child) {
		t.Fatalf("KillLeftovers = %+v, want group %d with process %d", left, w.pgid, w.child)
	}
	wait.Until(t, time.Minute, "the leftover to die", func() bool { return !proctest.Alive(w.child) })
	if n := w.records(t); n != 0 {
		t.Errorf("%d records left after KillLeftovers, want 0", n)
	}
}

// selfAndDead returns this process's identity and the pid of a process
// that has exited.
func selfAndDead(t *testing.T) (self process, dead int) {
	t.Helper()
	self, err := identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return self, cmd.Process.Pid
}

// A record whose group id now belongs to another process (pid reuse) kills
// nothing; the dead worker's journal, holding nothing else, goes.
func TestKillLeftoversIgnoresReusedPID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, dead := selfAndDead(t)
	stale := self
	stale.Start-- // this pid, but an earlier process
	owner := process{PID: dead, Start: 1, Boot: self.Boot}
	b, _ := encodeLines(entry{Owner: &owner}, entry{Group: &stale})
	path := journalPath(dir, fmt.Sprintf("%d-%d-1", owner.PID, owner.Start), 0)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	left, err := KillLeftovers(dir)
	if err != nil || len(left) != 0 {
		t.Fatalf("KillLeftovers = %+v, %v; want nothing killed", left, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("dead journal kept: %v", err)
	}
}

// The records an earlier version's dead worker left, a file each, are
// still read: its group is killed, its outcomes reported (a pending one by
// its exit file), and its records, exit files and spares removed.
func TestLegacyRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, dead := selfAndDead(t)
	worker := process{PID: dead, Start: 1, Boot: self.Boot}
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	group, err := identifyChild(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("g.group", map[string]any{"group": group, "worker": worker})
	write("done-1.outcome", map[string]any{"ti_id": "done", "try_number": 1, "state": "failed", "token": "t1", "worker": worker})
	exitFile := filepath.Join(dir, "pending-1.exit")
	write("pending-1.outcome", map[string]any{"ti_id": "pending", "try_number": 1, "state": "", "token": "t2",
		"exit_file": exitFile, "worker": worker})
	if err := os.WriteFile(exitFile, []byte("0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spare := fmt.Sprintf("%d-1-1-1.spare", dead)
	write(spare, nil)

	left, err := KillLeftovers(dir)
	if err != nil || len(left) != 1 || left[0].PGID != sleeper.Process.Pid {
		t.Fatalf("KillLeftovers = %+v, %v; want the recorded group", left, err)
	}
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := reportAll(t, l)
	if want := []string{"done failed t1", "pending success t2"}; !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), journalExt) {
			t.Errorf("%s left in the folder", e.Name())
		}
	}
}

// The guard kills, when its pipe ends, exactly the groups registered and
// not forgotten: a repeated registration counts once, forgetting a group
// it does not know changes nothing.
func TestGuardKillsTheGroupsItKnows(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	guard := exec.Command("/bin/sh", "-c", guardScript)
	guard.ExtraFiles = []*os.File{r}
	if err := guard.Start(); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _, _ = c.Process.Wait() })
		return c
	}
	a, b, c := start(), start(), start()
	pa, pb, pc := a.Process.Pid, b.Process.Pid, c.Process.Pid
	fmt.Fprintf(w, "%d\n%d\n%d\n%d\n-%d\n-%d\n-%d\n", pa, pb, pa, pc, pb, pa+pb+pc, pa)
	fmt.Fprintf(w, "%d\n", pa) // registered again after forgotten
	_ = w.Close()
	if err := guard.Wait(); err != nil {
		t.Fatalf("guard: %v", err)
	}
	for _, k := range []struct {
		cmd    *exec.Cmd
		killed bool
	}{{a, true}, {b, false}, {c, true}} {
		if k.killed {
			st, _ := k.cmd.Process.Wait()
			if ws, ok := st.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Errorf("process %d: %v, want killed by the guard", k.cmd.Process.Pid, st)
			}
		} else if !proctest.Alive(k.cmd.Process.Pid) {
			t.Errorf("process %d of a forgotten group died", k.cmd.Process.Pid)
		}
	}
}

// A task's first process may exit before its group is recorded: the record
// is made from the unreaped child all the same (a zombie keeps its start
// time), so a command as quick as `true` runs.
func TestQuickTaskIsRecorded(t *testing.T) {
	t.Parallel()
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, "the child to exit", func() bool {
		state, _, _, err := procFields(c.Process.Pid)
		return err == nil && state == "Z"
	})
	if _, err := identify(c.Process.Pid); err == nil {
		t.Error("identify took an exited process for a live one")
	}
	p, err := identifyChild(c.Process.Pid)
	if err != nil || p.Start == 0 {
		t.Errorf("identifyChild of an unreaped child = %+v, %v; want its identity", p, err)
	}
	_ = c.Wait()

	l, err := OpenLedger(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		cmd := exec.Command("true")
		g, err := Start(cmd, l)
		if err != nil {
			t.Fatalf("start a quick task: %v", err)
		}
		_ = cmd.Wait()
		g.Close()
	}
}
