package taskproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// guardScript is the guard of a worker process's task groups, run by
// /bin/sh (cheaper to start than bash), one per worker process. It reads
// lines from fd 3, the read end of the process's lifeline pipe (the
// loop's standard input, redirected once: a redirection at each read costs
// four system calls a line): "PGID" registers a task group, "-PGID"
// forgets one. End of file comes when
// every write end is closed, that is when the worker process is gone
// (however it died, SIGKILL included); it then kills every group still
// registered. It runs no other program while it waits (builtins only), and
// ignores the signals a task's group gets.
const guardScript = `trap '' TERM INT HUP QUIT
g=' '
while read -r p; do
	case $p in
	-*) q=${p#-}
		case $g in *" $q "*) g="${g%% $q *} ${g#* $q }" ;; esac ;;
	*) case $g in *" $p "*) ;; *) g="$g$p " ;; esac ;;
	esac
done <&3
for p in $g; do kill -9 -"$p" 2>/dev/null; done`

// lifeline is this process's: its write end stays open, never inherited
// (close-on-exec), until the process ends; the guard holds the read end.
// It, the guard and the forking thread are per process because what they
// signal, the death of the process and of a thread, are.
var lifeline = sync.OnceValues(func() (*forker, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the task lifeline pipe: %w", err)
	}
	f := &forker{read: r, write: w, reqs: make(chan func()), live: map[int]bool{}}
	go f.loop()
	return f, nil
})

// forker starts processes from one locked OS thread that never exits, so a
// child's parent-death signal fires only when the whole process dies, and
// keeps the guard of the groups it started.
type forker struct {
	read, write *os.File
	reqs        chan func()

	mu    sync.Mutex
	live  map[int]bool // the registered task groups
	guard *exec.Cmd    // nil until started, and after it died
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

// register tells the guard of a new task group, starting the guard first
// when none runs (the first group, or the guard was killed: the new guard
// learns every live group).
func (f *forker) register(pgid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live[pgid] = true
	if f.guard == nil {
		return f.startGuard()
	}
	return f.tell(strconv.Itoa(pgid))
}

// startGuard starts a guard and tells it every live group; f.mu is held.
func (f *forker) startGuard() error {
	guard := exec.Command("/bin/sh", "-c", guardScript)
	guard.ExtraFiles = []*os.File{f.read}
	guard.Env = []string{} // builtins only: it needs no variables, and gets none of the worker's secrets
	guard.Dir = "/"        // holds no task folder busy
	guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.start(guard); err != nil {
		return fmt.Errorf("start the task groups' guard: %w", err)
	}
	f.guard = guard
	go f.reap(guard)
	for p := range f.live {
		if err := f.tell(strconv.Itoa(p)); err != nil {
			return err
		}
	}
	return nil
}

// StartGuard starts this process's guard of task groups unless it runs,
// so that a worker's first task does not wait for it (Start starts it
// otherwise). The guard is one small shell a process, waiting on a pipe.
func StartGuard() error {
	f, err := lifeline()
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.guard != nil {
		return nil
	}
	return f.startGuard()
}

// reap waits for a guard that died while this process lives (someone
// killed it), so that the next group starts another; on the poller, as
// for a task (Wait), not with a thread blocked for the worker's life.
func (f *forker) reap(guard *exec.Cmd) {
	_ = Wait(guard)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.guard == guard {
		f.guard = nil
	}
}

// forget tells the guard a task group ended.
func (f *forker) forget(pgid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.live, pgid)
	if f.guard != nil {
		_ = f.tell("-" + strconv.Itoa(pgid)) // a guard that died forgets everything
	}
}

// tell writes one line to the guard; a line is shorter than PIPE_BUF, so
// lines never interleave.
func (f *forker) tell(line string) error {
	if _, err := f.write.WriteString(line + "\n"); err != nil {
		return fmt.Errorf("tell the task groups' guard: %w", err)
	}
	return nil
}

// Group is a running task's process group.
type Group struct {
	// PGID is the group's id (its leader, the task's first process).
	PGID   int
	f      *forker
	ledger *Ledger
	record process // the group's leader, as the ledger recorded it
}

// Start starts cmd as a task in a new process group that this process's
// guard kills when this process dies, and records the group in l (nil: not
// recorded). It sets cmd.SysProcAttr and, for a cmd made by
// exec.CommandContext, cmd.Cancel to SIGTERM the whole group when the
// context ends (cmd.WaitDelay then bounds the wait for it). The caller ends
// the group with Close once cmd has been waited for.
//
// The task's first process gets the parent-death signal, so it cannot
// outlive this process even before the guard has read its group; it
// starts no other process that soon (a shell takes milliseconds to start).
func Start(cmd *exec.Cmd, l *Ledger) (*Group, error) {
	f, err := lifeline()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	g := &Group{f: f}
	if cmd.Cancel != nil { // made by exec.CommandContext
		// The context may end as soon as the process has started, before
		// g.PGID is set: exec.Cmd sets cmd.Process before it watches it.
		cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGTERM) }
	}
	if err := f.start(cmd); err != nil {
		return nil, err
	}
	g.PGID = cmd.Process.Pid
	err = f.register(g.PGID)
	if err == nil && l != nil {
		if g.record, err = l.add(g.PGID); err == nil {
			g.ledger = l
		}
	}
	if err != nil {
		g.Close()
		_ = cmd.Wait() // reaps the killed task; the error is err's
		return nil, err
	}
	return g, nil
}

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error { return signalGroup(g.PGID, sig) }

// signalGroup sends sig to every process of group pgid. An id no task's
// group can have is refused: kill(2) takes 0 for the caller's own group
// (this process's, and its parent shell's or service manager's) and -1
// for every process.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("signal process group %d: no task's group", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}

// Close kills whatever is left of the group (processes its task left
// running in the background), tells the guard and removes the group's
// record. Call it right after cmd was waited for: until then the group's
// id cannot be another group's.
func (g *Group) Close() {
	_ = g.Signal(syscall.SIGKILL)
	g.f.forget(g.PGID)
	if g.ledger != nil {
		g.ledger.remove(g.record)
	}
}
