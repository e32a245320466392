package worker

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The in-task CLI is the file this worker runs, not whatever its path
// holds later: on Linux the link is /proc/<pid>/exe, which an upgrade that
// installs a new binary at the path does not change. The link runs.
func TestWeirOnPathIsTheRunningFile(t *testing.T) {
	t.Parallel()
	bin, err := weirOnPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(bin, "weir")
	target, err := os.Readlink(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/exe"); err == nil && target != fmt.Sprintf("/proc/%d/exe", os.Getpid()) {
		t.Errorf("link to %s, want this process's /proc/<pid>/exe", target)
	}
	self, _ := os.Executable()
	a, errA := os.Stat(link)
	b, errB := os.Stat(self)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Errorf("the link is not this program: %v %v", errA, errB)
	}
	if out, err := exec.Command(link, "-test.run=^$").CombinedOutput(); err != nil {
		t.Errorf("running the link: %v\n%s", err, out)
	}
}
