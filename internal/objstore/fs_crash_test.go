package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/objstore"
)

// Environment of the helper process the crash tests start.
const (
	envHelper    = "OBJSTORE_TEST_HELPER" // "fsize" or "loop"
	envHelperDir = "OBJSTORE_TEST_DIR"
)

const (
	crashKey   = "state/big"
	oldValue   = "the value before the failed write"
	bigSize    = 32 << 20
	fsizeLimit = 1 << 20
)

// TestFSHelperProcess is not a test: the crash tests run the test binary
// again with it selected to write from a process they can cripple or kill.
func TestFSHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		t.Skip("helper process for the crash-safety tests")
	}
	s, err := objstore.NewFS(os.Getenv(envHelperDir))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	switch mode {
	case "fsize":
		// The kernel refuses to grow any file past fsizeLimit: the write
		// fails part-way with EFBIG instead of killing us with SIGXFSZ.
		signal.Ignore(syscall.SIGXFSZ)
		lim := syscall.Rlimit{Cur: fsizeLimit, Max: fsizeLimit}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		err := s.Put(ctx, crashKey, bytes.Repeat([]byte{'n'}, 4*fsizeLimit))
		if !errors.Is(err, syscall.EFBIG) {
			t.Fatalf("Put past RLIMIT_FSIZE = %v, want EFBIG", err)
		}
	case "loop":
		// Write whole values until killed.
		for i := byte(0); ; i++ {
			if err := s.Put(ctx, crashKey, bytes.Repeat([]byte{'a' + i%26}, bigSize)); err != nil {
				t.Fatal(err)
			}
		}
	default:
		t.Fatalf("unknown helper mode %q", mode)
	}
}

// helper returns a command running TestFSHelperProcess in mode on dir.
func helper(mode, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFSHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envHelperDir+"="+dir)
	return cmd
}

// TestFSFailedWriteLeavesOldValue: a Put that the kernel fails part-way
// (file size limit) returns the error, keeps the old value whole, and
// leaves no temporary file behind.
func TestFSFailedWriteLeavesOldValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newFS(t, dir)
	if err := s.Put(t.Context(), crashKey, []byte(oldValue)); err != nil {
		t.Fatal(err)
	}
	if out, err := helper("fsize", dir).CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	assertOldOrWhole(t, s, 0)
	if tmps := tempFiles(t, dir); len(tmps) != 0 {
		t.Errorf("a failed Put left temporary files: %q", tmps)
	}
}

// TestFSKilledWriterLeavesWholeValue: a process killed while writing a
// large value leaves either the old value or a whole new one, never a part,
// and the store keeps working around the stray temporary file.
func TestFSKilledWriterLeavesWholeValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newFS(t, dir)
	if err := s.Put(t.Context(), crashKey, []byte(oldValue)); err != nil {
		t.Fatal(err)
	}
	cmd := helper("loop", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once a temporary file is partly written.
	deadline := time.Now().Add(time.Minute)
	for !partlyWritten(dir) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("helper wrote no temporary file within a minute:\n%s", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	t.Logf("killed the writer; temporary files left: %d", len(tempFiles(t, dir)))

	assertOldOrWhole(t, s, bigSize)
	if err := s.Put(t.Context(), crashKey, []byte("after")); err != nil {
		t.Fatalf("Put after a crash: %v", err)
	}
	if got, err := s.Get(t.Context(), crashKey); err != nil || string(got) != "after" {
		t.Errorf("Get after a crash = %q, %v", got, err)
	}
}

// assertOldOrWhole checks that crashKey holds oldValue or a whole value of
// wholeSize identical bytes, and that List shows only it.
func assertOldOrWhole(t *testing.T, s objstore.Store, wholeSize int) {
	t.Helper()
	got, err := s.Get(t.Context(), crashKey)
	if err != nil {
		t.Fatalf("Get after the failed write: %v", err)
	}
	whole := len(got) == wholeSize && wholeSize > 0 && bytes.Count(got, got[:1]) == len(got)
	if string(got) != oldValue && !whole {
		t.Errorf("after the failed write Get returned %d bytes: neither the old value nor a whole new one", len(got))
	}
	keys, err := s.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{crashKey}) {
		t.Errorf("List after the failed write = %q, want only %q", keys, crashKey)
	}
}

func newFS(t *testing.T, dir string) *objstore.FS {
	t.Helper()
	s, err := objstore.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tempFiles lists the store's temporary files under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var tmps []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".%tmp-") {
			tmps = append(tmps, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tmps
}

// partlyWritten reports whether a temporary file under dir holds some but
// not all of a big value.
func partlyWritten(dir string) bool {
	matches, _ := filepath.Glob(filepath.Join(dir, "state", ".%tmp-*"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Size() > 0 && st.Size() < bigSize {
			return true
		}
	}
	return false
}
