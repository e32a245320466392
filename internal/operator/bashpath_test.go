package operator

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bash is looked up on the worker's PATH once per value of PATH: a new
// PATH finds its own bash, a removed bash is looked up again, and the
// command still sees itself as "bash" ($0, its messages), as `bash -c`
// from a shell would.
func TestBashIsFoundOnTheWorkersPath(t *testing.T) {
	run := func() string {
		t.Helper()
		req, log := bashReq(`echo "$0"`, map[string]any{"do_xcom_push": true})
		res, err := (&Runner{}).Run(context.Background(), req)
		if err != nil {
			t.Fatalf("run: %v (log %s)", err, log.String())
		}
		var v string
		if err := json.Unmarshal(res.ReturnValue, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := run(); got != "bash" {
		t.Errorf("$0 = %q, want bash", got)
	}
	dir := t.TempDir()
	fake := "#!/bin/sh\necho fake bash, argv0 $0 >&2\necho fake\n"
	if err := os.WriteFile(filepath.Join(dir, "bash"), []byte(fake), 0o700); err != nil { //nolint:gosec // a test script
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if got := run(); got != "fake" {
		t.Errorf("with a bash first on a new PATH, the try ran %q, want the new PATH's bash", got)
	}
	if err := os.Remove(filepath.Join(dir, "bash")); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != "bash" {
		t.Errorf("the bash found first removed, $0 = %q, want bash found again further on PATH", got)
	}
}

// A bash found only in a folder relative to the current one (a relative
// PATH entry) is refused, as exec.Command refuses it (exec.ErrDot): the
// try fails and the planted script never runs.
func TestBashFromARelativePathFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("bin", 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "ran")
	script := "#!/bin/sh\ntouch " + planted + "\n"
	if err := os.WriteFile(filepath.Join("bin", "bash"), []byte(script), 0o700); err != nil { //nolint:gosec // a test script
		t.Fatal(err)
	}
	t.Setenv("PATH", "bin"+string(os.PathListSeparator)+"/nonexistent")
	req, _ := bashReq("true", map[string]any{"cwd": dir})
	_, err := (&Runner{}).Run(context.Background(), req)
	if err == nil || !errors.Is(err, exec.ErrDot) {
		t.Errorf("run with bash only in a relative PATH folder: err = %v, want exec.ErrDot", err)
	}
	if _, statErr := os.Stat(planted); statErr == nil {
		t.Error("the bash of the relative PATH folder ran")
	}
}
