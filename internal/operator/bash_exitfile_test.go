package operator

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// With ExitFile set, the task's shell leaves its exit status there, and the
// try ends as it would without: set -e, exit, a failing last command, a
// path with a quote in it, and a file that cannot be written.
func TestBashExitFile(t *testing.T) {
	t.Parallel()
	r := &Runner{}
	dir := filepath.Join(t.TempDir(), "it's here")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		cmd, file, want string
		fails           bool
	}{
		{cmd: "echo done", want: "0"},
		{cmd: "set -e\necho done", want: "0"},
		{cmd: "exit 3", want: "3", fails: true},
		{cmd: "set -e\nfalse\necho never", want: "1", fails: true},
		{cmd: "set -e\necho done", file: "/nonexistent/exit"},
	} {
		req, log := bashReq(tc.cmd, nil)
		req.ExitFile = tc.file
		if tc.file == "" {
			req.ExitFile = filepath.Join(dir, string(rune('a'+i))+".exit")
		}
		_, err := r.Run(context.Background(), req)
		if (err != nil) != tc.fails {
			t.Errorf("%q: err = %v, want failure %t; log %q", tc.cmd, err, tc.fails, log.String())
		}
		if tc.want == "" {
			continue
		}
		if b, err := os.ReadFile(req.ExitFile); err != nil || string(b) != tc.want+"\n" {
			t.Errorf("%q: exit file holds %q, %v; want %q", tc.cmd, b, err, tc.want)
		}
	}
}
