package operator

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/taskproc"
)

// pendingExit records a pending outcome in a ledger of its own and returns
// it: its ExitTrap for a request, its ExitStatus for what the shell left.
func pendingExit(t *testing.T, dir string) taskproc.Outcome {
	t.Helper()
	l, err := taskproc.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	o, err := l.Record(taskproc.Outcome{TIID: "ti", TryNumber: 1})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// With ExitTrap set, the task's shell leaves its exit status in the
// ledger, and the try ends as it would without: set -e, exit, a failing
// last command, a ledger folder with a quote in its name, and a journal
// that cannot be written.
func TestBashExitTrap(t *testing.T) {
	t.Parallel()
	r := &Runner{}
	dir := filepath.Join(t.TempDir(), "it's here")
	for _, tc := range []struct {
		cmd       string
		want      int
		fails     bool
		unwritten bool
	}{
		{cmd: "echo done", want: 0},
		{cmd: "set -e\necho done", want: 0},
		{cmd: "exit 3", want: 3, fails: true},
		{cmd: "set -e\nfalse\necho never", want: 1, fails: true},
		{cmd: "set -e\necho done", unwritten: true},
	} {
		o := pendingExit(t, dir)
		req, log := bashReq(tc.cmd, nil)
		req.ExitTrap = o.ExitTrap()
		if tc.unwritten {
			if err := os.Chmod(o.ExitTo, 0o400); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() == 0 { // root writes whatever the mode: a folder instead of the file
				req.ExitTrap = (taskproc.Outcome{TIID: "x", TryNumber: 1, ExitTo: t.TempDir()}).ExitTrap()
			}
		}
		_, err := r.Run(context.Background(), req)
		if (err != nil) != tc.fails {
			t.Errorf("%q: err = %v, want failure %t; log %q", tc.cmd, err, tc.fails, log.String())
		}
		if tc.unwritten {
			continue
		}
		if status, ok := o.ExitStatus(); !ok || status != tc.want {
			t.Errorf("%q: the shell left status %d (%t), want %d", tc.cmd, status, ok, tc.want)
		}
	}
}
