package taskproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/weirflow/weir/internal/sysfile"
)

// A ledger recycles the inodes of its files. Creating a file costs ext4 far
// more than rewriting one (up to a millisecond of kernel time on a crowded
// block group), and replacing a file by renaming another over it makes ext4
// flush the new one's data first (auto_da_alloc). So a file is written into
// a spare, one of a pool of retired files in the folder, and moved into
// place atomically: renamed to a new name, or exchanged with the file it
// replaces, whose inode becomes the spare. A retired file is renamed back
// into the pool. Spares are never records (their names end in spareExt), so
// a worker killed between two steps leaves only a spare, which the next
// ledger opened in the folder adopts.

// spareExt ends the name of a spare file: <pid>-<start>-<ledger>-<n>.spare,
// the first two naming the process whose ledger owns it.
const spareExt = ".spare"

// maxSpares bounds a ledger's pool. The pool holds no more files than were
// once in use at the same time (a spare is made only when none is free),
// three per running bash try; beyond maxSpares a retired file is removed.
const maxSpares = 256

// ledgers numbers the ledgers of this process, so that two never share a
// spare name.
var ledgers atomic.Int64

// spareName returns a new name for a spare of l.
func (l *Ledger) spareName() string {
	return filepath.Join(l.dir, fmt.Sprintf("%s-%d%s", l.sparePrefix, l.spareSeq.Add(1), spareExt))
}

// place writes b to path: b goes to a spare file, which then takes path's
// place atomically, so path holds either its earlier content or b,
// whenever its worker is killed.
func (l *Ledger) place(path string, b []byte) error {
	spare, err := l.fill(b)
	if err != nil {
		return err
	}
	l.step("filled")
	err = unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EEXIST) {
		if err = unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err == nil {
			l.step("exchanged")
			l.release(spare) // it now holds path's earlier content
			return nil
		}
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) { // a file system without renameat2's flags
		err = os.Rename(spare, path) //nolint:gosec // G703: names the ledger made in its own run folder
	}
	if err != nil {
		_ = os.Remove(spare) //nolint:gosec // G703: as above
		return err
	}
	l.step("placed")
	return nil
}

// fill writes b to a spare, a free one or else a new one, and returns its
// name. It calls the system directly: os.File would register each file
// with the runtime's poller first, three system calls more than the four
// it needs.
func (l *Ledger) fill(b []byte) (string, error) {
	name, fd, err := l.take()
	if err != nil {
		return "", err
	}
	_, err = unix.Pwrite(fd, b, 0)
	if err == nil {
		err = unix.Ftruncate(fd, int64(len(b))) // cheap: it keeps the first block, and never truncates to 0
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name) //nolint:gosec // G703: a spare of the ledger's own run folder
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return name, nil
}

// take opens a free spare, or creates one when none is free.
func (l *Ledger) take() (string, int, error) {
	for {
		l.mu.Lock()
		n := len(l.spares)
		if n == 0 {
			l.mu.Unlock()
			break
		}
		name := l.spares[n-1]
		l.spares = l.spares[:n-1]
		l.mu.Unlock()
		fd, err := sysfile.Open(name, unix.O_WRONLY, 0)
		if !errors.Is(err, unix.ENOENT) {
			return name, fd, err
		}
		// removed by someone else: take another
	}
	name := l.spareName()
	fd, err := sysfile.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	return name, fd, err
}

// release returns spare, a file of the pool's naming, to the pool, or
// removes it when the pool is full.
func (l *Ledger) release(spare string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.spares) >= maxSpares {
		_ = os.Remove(spare) //nolint:gosec // G703: a spare of the ledger's own run folder
		return
	}
	l.spares = append(l.spares, spare)
}

// retire takes the file at path out of use: into the pool while it has
// room and path is in the ledger's folder, else removed.
func (l *Ledger) retire(path string) {
	if path == "" {
		return
	}
	l.mu.Lock()
	full := len(l.spares) >= maxSpares
	l.mu.Unlock()
	if !full && filepath.Dir(path) == l.dir {
		spare := l.spareName()
		err := unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, spare, unix.RENAME_NOREPLACE)
		if err == nil {
			l.step("retired")
			l.release(spare)
			return
		}
		if errors.Is(err, unix.ENOENT) {
			return
		}
	}
	_ = os.Remove(path) //nolint:gosec // G703: a record of the ledger's folder, or the exit file a record of it names
}

// adoptSpares takes into l's pool the spares of ledgers whose process is
// gone (a previous life's), removing those beyond maxSpares.
func (l *Ledger) adoptSpares() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("read task group folder: %w", err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), spareExt) || ownerAlive(e.Name()) {
			continue
		}
		l.retire(filepath.Join(l.dir, e.Name()))
	}
	return nil
}

// step marks the end of a step of place, where a crash test kills the
// process (Ledger.crashAt).
func (l *Ledger) step(name string) {
	if l.crashAt != nil {
		l.crashAt(name)
	}
}
