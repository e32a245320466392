package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// standaloneLock is the file a standalone holds locked (flock) while it
// runs on its home.
const standaloneLock = "standalone.lock"

// lockHome takes the home's standalone lock, which the kernel releases when
// the process ends however it ends, and returns its release. A second
// standalone on the same home is refused naming the first's pid: two would
// run two workers of one id and rewrite the home's weir.toml under each
// other.
func lockHome(home string) (release func(), err error) {
	path := filepath.Join(home, standaloneLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // in the 0700 home
	if err != nil {
		return nil, fmt.Errorf("lock the home %s: %w", home, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil { //nolint:gosec // a file descriptor fits an int
		b, _ := os.ReadFile(path) //nolint:gosec // in the home
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				who = fmt.Sprintf("process %d", pid)
			}
			return nil, fmt.Errorf("a standalone already runs on home %s (%s holds %s): stop it first, or give this one another --home", home, who, path)
		}
		return nil, fmt.Errorf("lock the home %s: %w", home, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}
