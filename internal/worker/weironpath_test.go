package worker

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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

// A worker hidden from its tasks (`weir worker`: non-dumpable) puts a file
// of its own there, a hard link or a copy of its executable, since its
// tasks may not follow its /proc/<pid>/exe; it runs. Not parallel: the
// test flips this process's dumpable flag.
func TestWeirOnPathOfAHiddenWorker(t *testing.T) {
	const prSetDumpable = 4
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		t.Skipf("prctl: %v", errno)
	}
	t.Cleanup(func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 1, 0) })
	bin, err := weirOnPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(bin, "weir")
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("%s: %v, %v; want an executable file of its own, no link to /proc", link, fi, err)
	}
	if out, err := exec.Command(link, "-test.run=^$").CombinedOutput(); err != nil {
		t.Errorf("running it: %v\n%s", err, out)
	}
}
