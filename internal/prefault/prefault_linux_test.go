package prefault

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// residency returns the size and the resident size, in KiB, of this
// process's mappings that keep selects (/proc/self/smaps).
func residency(t *testing.T, keep func(lo uintptr, perms, path string) bool) (size, rss int) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer func() { _ = f.Close() }()
	kept := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) == 3 && strings.HasSuffix(fields[0], ":") {
			if kb, err := strconv.Atoi(fields[1]); err == nil && kept {
				switch fields[0] {
				case "Size:":
					size += kb
				case "Rss:":
					rss += kb
				}
			}
			continue
		}
		lo, _, perms, path := parseMapping([]byte(line))
		kept = keep(lo, perms, path)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return size, rss
}

// Code asks for exactly the binary's executable mappings, and after it the
// whole code is resident.
func TestCodeMapsTheBinarysExecutableMappings(t *testing.T) {
	n, err := Code()
	if errors.Is(err, syscall.EINVAL) {
		t.Skip("the kernel predates MADV_POPULATE_READ (Linux 5.14)")
	}
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink("/proc/self/exe") // as the maps name it (" (deleted)" kept)
	if err != nil {
		t.Fatal(err)
	}
	size, rss := residency(t, func(_ uintptr, perms, path string) bool {
		return path == exe && strings.Contains(perms, "x")
	})
	if size == 0 || n != size<<10 {
		t.Fatalf("Code asked for %d bytes; the binary's executable mappings are %d KiB", n, size)
	}
	if rss < size {
		t.Errorf("resident code %d KiB of %d KiB after Code", rss, size)
	}
}

// populate maps a file's pages that nothing has touched.
func TestPopulateMapsPagesNothingTouched(t *testing.T) {
	const size = 4 << 20
	path := filepath.Join(t.TempDir(), "code")
	if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Munmap(b) }()
	lo := uintptr(unsafe.Pointer(&b[0]))
	ours := func(start uintptr, _, _ string) bool { return start == lo }

	if _, rss := residency(t, ours); rss != 0 {
		t.Fatalf("%d KiB resident before populate: the test needs a mapping nothing touched", rss)
	}
	err = populate(lo, lo+size)
	if errors.Is(err, syscall.EINVAL) {
		t.Skip("the kernel predates MADV_POPULATE_READ (Linux 5.14)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, rss := residency(t, ours); got != size>>10 || rss != got {
		t.Errorf("after populate: %d KiB resident of %d KiB, want all %d", rss, got, size>>10)
	}
}

func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line        string
		lo, hi      uintptr
		perms, path string
	}{
		{"00400000-013fd000 r-xp 00000000 fe:00 9978290                            /usr/bin/weir",
			0x400000, 0x13fd000, "r-xp", "/usr/bin/weir"},
		{"7f125d5f0000-7f125d730000 rw-p 00000000 00:00 0 ", 0x7f125d5f0000, 0x7f125d730000, "rw-p", ""},
		{"00400000-013fd000 r-xp 00000000 fe:00 9978290   /opt/my tools/weir (deleted)",
			0x400000, 0x13fd000, "r-xp", "/opt/my tools/weir (deleted)"},
	} {
		lo, hi, perms, path := parseMapping([]byte(c.line))
		if lo != c.lo || hi != c.hi || perms != c.perms || path != c.path {
			t.Errorf("parseMapping(%q) = %#x, %#x, %q, %q; want %#x, %#x, %q, %q",
				c.line, lo, hi, perms, path, c.lo, c.hi, c.perms, c.path)
		}
	}
}

func TestLines(t *testing.T) {
	var got []string
	for l := range lines([]byte("a\nbc\n\nd")) {
		got = append(got, string(l))
	}
	if strings.Join(got, "|") != "a|bc||d" {
		t.Errorf("lines = %q", got)
	}
}
