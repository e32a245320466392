package taskproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// guardScript leads a task's process group, run by /bin/sh (cheaper to
// start than bash). It ignores the signals a cancelled task's group gets
// (the worker, alive, SIGKILLs the group after the grace period), reads fd
// 3 until end of file, which comes when every write end of the lifeline is
// closed, that is when the worker process is gone, and then kills its
// whole group, itself included.
const guardScript = `trap '' TERM INT HUP QUIT
while read -r _ <&3; do :; done
kill -9 0`

// lifeline is this process's: its write end stays open, never inherited
// (close-on-exec), until the process ends; each guard inherits the read end.
// It and the forking thread are per process because what they signal, the
// death of the process and of a thread, are.
var lifeline = sync.OnceValues(func() (*forker, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the task lifeline pipe: %w", err)
	}
	f := &forker{read: r, write: w, reqs: make(chan func())}
	go f.loop()
	return f, nil
})

// forker starts processes from one locked OS thread that never exits, so a
// child's parent-death signal fires only when the whole process dies.
type forker struct {
	read, write *os.File
	reqs        chan func()
}

func (f *forker) loop() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	for fn := range f.reqs {
		fn()
	}
}

// start runs cmd.Start on the forking thread.
func (f *forker) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	f.reqs <- func() { done <- cmd.Start() }
	return <-done
}

// Group is a running task's process group.
type Group struct {
	// PGID is the group's id (its guard's pid).
	PGID   int
	guard  *exec.Cmd
	ledger *Ledger
	record string
}

// Start starts cmd as a task in a new process group led by a guard that
// kills the group when this process dies, and records the group in l (nil:
// not recorded). It sets cmd.SysProcAttr and, for a cmd made by
// exec.CommandContext, cmd.Cancel to SIGTERM the whole group when the
// context ends (cmd.WaitDelay then bounds the wait for it). The caller ends the group with Close once cmd has been waited
// for.
func Start(cmd *exec.Cmd, l *Ledger) (*Group, error) {
	f, err := lifeline()
	if err != nil {
		return nil, err
	}
	guard := exec.Command("/bin/sh", "-c", guardScript)
	guard.ExtraFiles = []*os.File{f.read}
	guard.Env = []string{} // builtins only: it needs no variables, and gets none of the worker's secrets
	guard.Dir = "/"        // holds no task folder busy
	guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.start(guard); err != nil {
		return nil, fmt.Errorf("start the task's process group guard: %w", err)
	}
	g := &Group{PGID: guard.Process.Pid, guard: guard}
	if l != nil {
		if g.record, err = l.add(g.PGID); err != nil {
			g.Close()
			return nil, err
		}
		g.ledger = l
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: g.PGID, Pdeathsig: syscall.SIGKILL}
	if cmd.Cancel != nil { // made by exec.CommandContext
		cmd.Cancel = func() error { return g.Signal(syscall.SIGTERM) }
	}
	if err := f.start(cmd); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-g.PGID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", g.PGID, err)
	}
	return nil
}

// Close kills whatever is left of the group, guard included, reaps the
// guard and removes the group's record.
func (g *Group) Close() {
	_ = g.Signal(syscall.SIGKILL)
	_ = g.guard.Wait()
	if g.ledger != nil {
		g.ledger.remove(g.record)
	}
}
