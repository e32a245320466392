package operator

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/weirflow/weir/internal/sysfile"
)

// found remembers where bash is on the worker's PATH, for one value of
// PATH: exec.Command looks a bare name up anew each time, a stat per folder
// of PATH, for every try; a remembered bash costs one stat.
var found struct {
	mu         sync.Mutex
	path, bash string
}

// bashCommand is exec.CommandContext(ctx, "bash", "-c", command), with bash
// looked up again only when PATH changed or the bash found last is gone.
// Its argv[0] stays "bash", which the shell shows in its messages
// ("bash: line 1: ...").
func bashCommand(ctx context.Context, command string) *exec.Cmd {
	bash := bashPath()
	if bash == "" {
		return exec.CommandContext(ctx, "bash", "-c", command) //nolint:gosec // running the task's command is the point
	}
	cmd := exec.CommandContext(ctx, bash, "-c", command) //nolint:gosec // as above
	cmd.Args[0] = "bash"
	return cmd
}

// nullStdin is a task shell's standard input, the null device, opened once
// for the process: os/exec would open and close it at every start (with
// os.Open's poller registration, seven system calls a try). Nil when it
// cannot be opened (os/exec then opens it, and reports why).
var nullStdin = sync.OnceValue(func() io.Reader {
	f, err := sysfile.OpenFile(os.DevNull, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	return f
})

// bashPath is the bash PATH finds, "" when none is (exec.Command then
// reports why).
func bashPath() string {
	path := os.Getenv("PATH")
	found.mu.Lock()
	defer found.mu.Unlock()
	if found.path != path || !executable(found.bash) {
		// On an error (none found, or only in a folder relative to the
		// current one: exec.ErrDot) bash stays "".
		found.bash = ""
		if b, err := exec.LookPath("bash"); err == nil {
			found.bash = b
		}
		found.path = path
	}
	return found.bash
}

// executable reports whether path names an executable file (by its mode
// bits; exec.LookPath asks the kernel, which a bash made unexecutable for
// this user alone would fail, at the try's start).
func executable(path string) bool {
	if path == "" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
