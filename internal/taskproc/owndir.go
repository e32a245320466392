package taskproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OwnDir makes a new folder in parent (creating parent 0700) for this
// process's private files, named after the process (<pid>-<start>-…), and
// removes the folders there of processes no longer alive. A worker keeps
// its tries' tokens, its link to weir and bash tasks' deferral requests in
// such a folder: removed when it stops, and, when it is killed, by the next
// worker started on the same run folder, rather than left behind for good.
func OwnDir(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil { //nolint:gosec // G703: the worker's own run folder, from its configuration
		return "", fmt.Errorf("create %s: %w", parent, err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", parent, err)
	}
	for _, e := range entries {
		if owner, ok := namedOwner(e.Name()); ok && e.IsDir() && !owner.alive() {
			_ = os.RemoveAll(filepath.Join(parent, e.Name())) // a dead process's: best effort, the next start tries again
		}
	}
	me, err := identify(os.Getpid())
	if err != nil {
		return "", fmt.Errorf("identify this process: %w", err)
	}
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%d-%d-", me.PID, me.Start))
	if err != nil {
		return "", fmt.Errorf("create a private folder in %s: %w", parent, err)
	}
	return dir, nil
}

// ownerAlive reports whether the process a name begins with
// (<pid>-<start>-…: a spare file's or an OwnDir folder's) still runs.
func ownerAlive(name string) bool {
	owner, ok := namedOwner(name)
	return ok && owner.alive()
}

// namedOwner returns the process a name begins with (<pid>-<start>-…), in
// this boot; ok is false for a name of another form.
func namedOwner(name string) (p process, ok bool) {
	f := strings.SplitN(name, "-", 3)
	if len(f) < 3 {
		return process{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	boot, err3 := bootID()
	if err1 != nil || err2 != nil || err3 != nil {
		return process{}, false
	}
	return process{PID: pid, Start: start, Boot: boot}, true
}
