package taskproc

import (
	"os"
	"os/exec"
	"testing"
)

// A process HideFromTasks ran in is not dumpable, what keeps a same-user
// task out of its /proc/<pid>/environ (the kernel's rule; the tests run
// as root, who reads it anyway). Run in a child of the test binary, which
// it must not change.
func TestHideFromTasks(t *testing.T) {
	if os.Getenv("WEIR_TEST_HIDE") == "1" {
		if d, err := dumpable(); err != nil || d != 1 {
			t.Fatalf("before: dumpable = %d, %v; want 1", d, err)
		}
		if err := HideFromTasks(); err != nil {
			t.Fatal(err)
		}
		if d, err := dumpable(); err != nil || d != 0 {
			t.Fatalf("after: dumpable = %d, %v; want 0", d, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHideFromTasks$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WEIR_TEST_HIDE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
}
