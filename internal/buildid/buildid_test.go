package buildid

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The build ID read from a binary is the one `go tool buildid` prints, and
// the test binary's own is found.
func TestReadMatchesGoTool(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if got := Self(); got != want || got == "" {
		t.Errorf("Self() = %q, want %q (go tool buildid)", got, want)
	}
}

// A file that is not an ELF binary is an error, and its ID is "".
func TestReadNonELF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := Read(path); err == nil || id != "" {
		t.Errorf("Read(script) = %q, %v; want an error", id, err)
	}
}
