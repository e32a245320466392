package taskproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OwnDir makes a 0700 folder named after this process and removes the
// folders of processes no longer alive (a killed worker's, a reused pid's),
// leaving a live process's folder and anything not named after a process.
func TestOwnDirRemovesOnlyDeadProcessesFolders(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "workers")
	self, dead := selfAndDead(t)
	mkdir := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(p, "bin"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "ti.token"), []byte("a try's token"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	killed := mkdir(fmt.Sprintf("%d-%d-1", dead, 1))
	reused := mkdir(fmt.Sprintf("%d-%d-2", self.PID, self.Start-1)) // this pid, an earlier process
	sibling := mkdir(fmt.Sprintf("%d-%d-3", self.PID, self.Start))
	other := mkdir("notes")
	file := filepath.Join(parent, fmt.Sprintf("%d-%d-4", dead, 1))
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	dir, err := OwnDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{killed, reused} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s (a dead process's folder) kept: %v", filepath.Base(gone), err)
		}
	}
	for _, kept := range []string{sibling, other, file} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s removed: %v; want a live process's folder and other entries kept", filepath.Base(kept), err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("OwnDir made %s: %v, %v; want a folder with mode 0700", dir, fi, err)
	}
	if prefix := fmt.Sprintf("%d-%d-", self.PID, self.Start); filepath.Dir(dir) != parent || !strings.HasPrefix(filepath.Base(dir), prefix) {
		t.Errorf("OwnDir = %s; want a folder of %s named %s…", dir, parent, prefix)
	}
	if !ownerAlive(filepath.Base(dir)) {
		t.Error("the new folder does not name a live owner: the next OwnDir would remove it")
	}
}
