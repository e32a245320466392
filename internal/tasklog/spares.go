package tasklog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weirflow/weir/internal/sysfile"
)

// A try's log is a new folder and a new file (task_id=…/attempt=1.log),
// and creating an inode costs ext4 from tens of microseconds to a
// millisecond of kernel time (docs/benchmarks.md, "Machine"): on a chain
// of short tries, more than the rest of a step's orchestration. Spares
// makes them ahead of need, off the try's path (as taskproc's ledger
// keeps spare files for its records, for the same reason): a spare is a
// folder in the log folder's SparesDir holding an empty first-try log,
// opened, and a first try's log is placed by renaming its spare to the
// try's folder.
//
// A spare is never a log: its name is under SparesDir, which no key maps
// to (every key's path starts with dag_id=), and readers, pruning and the
// uploader go by key or by record. Renames move it, so no two processes
// sharing the folder can both place one spare: one of the renames fails,
// and that opener falls back to creating the log (Open).

// SparesDir is the folder under the log folder that holds spares.
const SparesDir = ".spares"

// spareLog is the file a spare holds: the log of a first try, or of a
// callback's first attempt.
const spareLog = "attempt=1.log"

// sparesKept is how many spares a pool keeps made: a chain places one at
// a time; a burst of tries is bound by the CPU, which making more ahead
// would not spare, and a process that ends removes what it did not place.
const sparesKept = 2

// burstPause is how long a pool's refill waits, when logs are opened
// faster than it makes spares, before it looks again.
const burstPause = 20 * time.Millisecond

// staleSpare is the age past which a spare found in SparesDir when a pool
// starts is removed: one a dead process left (a live process's idle spare
// may go too; its opener then creates its log instead).
const staleSpare = time.Hour

// Spares is a pool of spare log folders under a log folder, refilled by a
// goroutine of its own from the second first try's log opened until Close.
type Spares struct {
	base   string
	ready  chan spare
	start  sync.Once
	stop   chan struct{}
	done   chan struct{}
	close  sync.Once
	off    atomic.Bool  // spares cannot be placed in this folder
	misses atomic.Int32 // openers that found no spare ready since the last was made
	// unplaced counts the first tries' logs opened with no spare ready.
	unplaced atomic.Int32
	name     func() string // a new spare's path
}

type spare struct {
	dir  string
	file *os.File // its log, open for appending
}

// NewSpares returns a pool of spares for the log folder base.
func NewSpares(base string) *Spares {
	s := &Spares{base: base, ready: make(chan spare, sparesKept-1),
		stop: make(chan struct{}), done: make(chan struct{})}
	prefix := fmt.Sprintf("%d-%d-", os.Getpid(), time.Now().UnixNano())
	var n int
	var mu sync.Mutex
	s.name = func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return filepath.Join(base, SparesDir, fmt.Sprintf("%s%d", prefix, n))
	}
	return s
}

// Open opens key's log for appending as the package's Open does, placing
// a spare when the log is a first try's in a folder that does not exist
// yet.
func (s *Spares) Open(key Key) (*os.File, error) {
	p, err := Path(s.base, key)
	if err != nil {
		return nil, err
	}
	if filepath.Base(p) == spareLog {
		if f := s.place(filepath.Dir(p)); f != nil {
			return f, nil
		}
	}
	return openPath(p)
}

// place renames a ready spare to dir and returns its log, or nil when no
// spare is ready or dir exists (the caller then creates the log).
func (s *Spares) place(dir string) *os.File {
	if s.off.Load() {
		return nil
	}
	var sp spare
	select {
	case sp = <-s.ready:
	default:
		// The refill starts at the second log with none ready: a process
		// that opens one (a one-task `weir dags test` with log_store =
		// folder) makes no spares.
		if s.unplaced.Add(1) > 1 {
			s.start.Do(func() { go s.refill() })
			s.misses.Add(1)
		}
		return nil
	}
	err := rename(sp.dir, dir)
	if errors.Is(err, unix.ENOENT) && os.MkdirAll(filepath.Dir(dir), 0o750) == nil {
		err = rename(sp.dir, dir) // the try's parent folder was new
	}
	switch {
	case err == nil:
		return sp.file
	case errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTEMPTY):
		s.keep(sp) // dir is there already (a resumed try)
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EXDEV):
		s.off.Store(true) // a file system without renameat2's flags (NFS): spares never place
		discard(sp)
	default: // taken away by a stale-spare sweep
		discard(sp)
	}
	return nil
}

// keep puts a spare not placed back in ready, or discards it when ready
// is full or the pool closed.
func (s *Spares) keep(sp spare) {
	select {
	case <-s.stop:
		discard(sp)
		return
	default:
	}
	select {
	case s.ready <- sp:
	default:
		discard(sp)
	}
}

// rename moves a spare to dir, never over an existing one.
func rename(from, dir string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE)
}

// refill keeps sparesKept spares made until Close: one in hand and the
// rest in ready. It pauses when logs were opened faster than it made a
// spare (more than one opener found none meanwhile): in such a burst,
// bound by the CPU, each spare would only add a rename to the inodes its
// opener creates anyway. A chain opens one log at a time and never
// pauses it.
func (s *Spares) refill() {
	defer close(s.done)
	s.sweep()
	for !s.off.Load() {
		sp, err := s.make()
		if err != nil {
			return // the openers create their logs; Open's own error will say why
		}
		select {
		case s.ready <- sp:
		case <-s.stop:
			discard(sp)
			return
		}
		if s.misses.Swap(0) > 1 {
			select {
			case <-time.After(burstPause):
				s.misses.Store(0) // the pause's own
			case <-s.stop:
				return
			}
		}
	}
}

// make creates a spare: its folder, and its log opened for appending.
func (s *Spares) make() (spare, error) {
	dir := s.name()
	err := os.Mkdir(dir, 0o750) // SparesDir exists but for the first: no MkdirAll stats
	if errors.Is(err, os.ErrNotExist) {
		err = os.MkdirAll(dir, 0o750)
	}
	if err != nil {
		return spare{}, err
	}
	f, err := sysfile.OpenFile(filepath.Join(dir, spareLog), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		_ = os.Remove(dir)
		return spare{}, err
	}
	return spare{dir: dir, file: f}, nil
}

// discard closes a spare's log and removes what is left of it.
func discard(sp spare) {
	_ = sp.file.Close()
	_ = os.RemoveAll(sp.dir)
}

// sweep removes the stale spares of SparesDir. Each is first renamed to a
// name of this pool's, so that its owner, if alive, cannot place it while
// it is being removed: the owner's rename fails and it creates its log.
func (s *Spares) sweep() {
	dir := filepath.Join(s.base, SparesDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < staleSpare {
			continue
		}
		taken := s.name()                                          // a new name: no renameat2 flag needed (NFS has none)
		if os.Rename(filepath.Join(dir, e.Name()), taken) == nil { //nolint:gosec // G703: names under the pool's own folder
			_ = os.RemoveAll(taken)
		}
	}
}

// Close stops the refill and removes the spares not placed. Open still
// works after it, creating each log.
func (s *Spares) Close() { s.close.Do(s.stopRefill) }

func (s *Spares) stopRefill() {
	started := true
	s.start.Do(func() { started = false })
	if !started {
		return
	}
	close(s.stop)
	<-s.done
	for {
		select {
		case sp := <-s.ready:
			discard(sp)
		default:
			return
		}
	}
}
