package taskproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// recordExt ends the name of a group's record file.
const recordExt = ".group"

// record is the file kept for one running task group.
type record struct {
	Group  process `json:"group"`  // the group's leader (the task's first process), whose pid is the group id
	Worker process `json:"worker"` // the worker process that started it
}

// Ledger records a worker's running task groups as files in a folder
// ($WEIR_HOME/run/task-groups), one per group, so that the worker's next
// life can kill those still running (KillLeftovers).
type Ledger struct {
	dir   string
	owner process

	sparePrefix string       // of its spares' names (spares.go)
	spareSeq    atomic.Int64 // the last spare name's number
	mu          sync.Mutex
	spares      []string          // the free spares
	crashAt     func(step string) // called after each step of place and retire by crash tests; nil otherwise
}

// OpenLedger opens (creating it 0700) the folder of group records for this
// process, and takes the spare files of dead processes' ledgers there into
// its pool.
func OpenLedger(dir string) (*Ledger, error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil { //nolint:gosec // G703: the worker's own run folder, from its configuration
		return nil, fmt.Errorf("create task group folder: %w", err)
	}
	owner, err := identify(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("identify the worker process: %w", err)
	}
	l := &Ledger{dir: dir, owner: owner, sparePrefix: fmt.Sprintf("%d-%d-%d", owner.PID, owner.Start, ledgers.Add(1))}
	if err := l.adoptSpares(); err != nil {
		return nil, err
	}
	return l, nil
}

// add records the group led by pgid, a child of this process not yet
// waited for (it may have exited), and returns its file.
func (l *Ledger) add(pgid int) (string, error) {
	g, err := identifyChild(pgid)
	if err != nil {
		return "", fmt.Errorf("identify task process group %d: %w", pgid, err)
	}
	b, err := json.Marshal(record{Group: g, Worker: l.owner})
	if err != nil {
		return "", err
	}
	path := filepath.Join(l.dir, fmt.Sprintf("%d-%d%s", g.PID, g.Start, recordExt))
	if err := l.place(path, b); err != nil {
		return "", fmt.Errorf("record task process group: %w", err)
	}
	return path, nil
}

// remove forgets a finished group.
func (l *Ledger) remove(path string) { l.retire(path) }

// Leftover is a task process group of a dead worker that KillLeftovers
// killed.
type Leftover struct {
	PGID      int   // the group's id
	WorkerPID int   // the pid of the worker that started it
	Killed    []int // the processes still running in it
}

// KillLeftovers kills the recorded task groups of workers no longer alive
// that still run, and removes their records; records of live workers (a
// sibling sharing the folder) stay. A group is killed only while it is the
// recorded one: its leader still runs with the recorded start time, or, the
// leader gone, members started after it keep its id (a group id is not
// reused while any member lives).
func KillLeftovers(dir string) ([]Leftover, error) {
	var out []Leftover
	err := readRecords(dir, recordExt, func(path string, b []byte) error {
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			return err
		}
		if rec.Worker.alive() {
			return nil
		}
		if pids := rec.kill(); len(pids) > 0 {
			out = append(out, Leftover{PGID: rec.Group.PID, WorkerPID: rec.Worker.PID, Killed: pids})
		}
		_ = os.Remove(path)
		return nil
	})
	return out, err
}

// readRecords calls each with the path and content of every record named
// *ext in dir, removing the temporary files (*ext.tmp) of earlier versions'
// workers that died writing one; each error names its file.
func readRecords(dir, ext string, each func(path string, b []byte) error) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read task group folder: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), ext+".tmp") {
			_ = os.Remove(path)
			continue
		}
		if !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		b, err := os.ReadFile(path) //nolint:gosec // G304: a file of the worker's own run folder
		if err == nil {
			err = each(path, b)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

// kill SIGKILLs the recorded group if it still runs and returns the
// processes it found in it.
func (r record) kill() []int {
	if r.Group.PID <= 1 {
		return nil // names no task's group (kill would take 0 for this process's own)
	}
	if boot, err := bootID(); err != nil || boot != r.Group.Boot {
		return nil // rebooted since: nothing of that life runs
	}
	if !r.Group.alive() {
		if _, _, err := procStat(r.Group.PID); err == nil {
			return nil // the pid now belongs to another process: the group emptied once
		}
	}
	pids := groupMembers(r.Group.PID, r.Group.Start)
	if len(pids) > 0 {
		_ = signalGroup(r.Group.PID, syscall.SIGKILL)
	}
	return pids
}
