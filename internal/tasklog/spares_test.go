package tasklog

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// ready waits until s has a spare ready, starting its refill.
func ready(t *testing.T, s *Spares) {
	t.Helper()
	s.start.Do(func() { go s.refill() })
	deadline := time.Now().Add(10 * time.Second)
	for len(s.ready) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no spare made in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// newSpares returns a log folder and its pool, closed at the test's end.
func newSpares(t *testing.T) (string, *Spares) {
	t.Helper()
	base := t.TempDir()
	s := NewSpares(base)
	t.Cleanup(s.Close)
	return base, s
}

// spareInodes returns the inodes of the logs the spares of base hold.
func spareInodes(t *testing.T, base string) map[uint64]bool {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(base, SparesDir, "*", spareLog))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[uint64]bool{}
	for _, l := range logs {
		inodes[inode(t, l)] = true
	}
	return inodes
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// spareCount is how many spares the log folder holds.
func spareCount(t *testing.T, base string) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(base, SparesDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(entries)
}

// write opens key's log through s, writes line to it and closes it.
func write(t *testing.T, s *Spares, key Key, line string) {
	t.Helper()
	f, err := s.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, base string, key Key) string {
	t.Helper()
	b, _, err := Read(base, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A first try's log in a new folder is a spare renamed into place: the
// log holds what was written, where the layout puts it, and no spare is
// left behind by Close.
func TestSparesPlaceFirstTriesLogs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	s := NewSpares(base)
	for _, key := range []Key{
		{DagID: "d", RunID: "r1", TaskID: "a", MapIndex: core.NoMapIndex, TryNumber: 1}, // new run folder
		{DagID: "d", RunID: "r1", TaskID: "b", MapIndex: core.NoMapIndex, TryNumber: 1}, // run folder there
		{DagID: "d", RunID: "r1", TaskID: "m", MapIndex: 7, TryNumber: 1},               // mapped
		{DagID: "d", RunID: "r1", MapIndex: core.NoMapIndex, TryNumber: 1, Callback: 3}, // a callback's
	} {
		ready(t, s)
		spares := spareInodes(t, base)
		write(t, s, key, "hello "+key.TaskID+"\n")
		if got := readAll(t, base, key); got != "hello "+key.TaskID+"\n" {
			t.Fatalf("%+v: log = %q", key, got)
		}
		if p, _ := Path(base, key); !spares[inode(t, p)] {
			t.Fatalf("%+v: the log is not one of the spares %v", key, spares)
		}
	}
	s.Close()
	if n := spareCount(t, base); n != 0 {
		t.Fatalf("%d spares left after Close", n)
	}
	write(t, s, Key{DagID: "d", RunID: "r2", TaskID: "a", MapIndex: core.NoMapIndex, TryNumber: 1}, "after close\n")
	if n := spareCount(t, base); n != 0 {
		t.Fatalf("Open after Close made %d spares", n)
	}
}

// A log whose folder exists (a resumed try's, a retry's) is opened as
// before: appended to, never replaced by a spare.
func TestSparesNeverReplaceALog(t *testing.T) {
	t.Parallel()
	base, s := newSpares(t)
	first := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: core.NoMapIndex, TryNumber: 1}
	ready(t, s)
	write(t, s, first, "started\n")
	ready(t, s)
	write(t, s, first, "resumed\n")
	if got := readAll(t, base, first); got != "started\nresumed\n" {
		t.Fatalf("resumed log = %q", got)
	}
	retry := first
	retry.TryNumber = 2
	write(t, s, retry, "try 2\n")
	if got := readAll(t, base, retry); got != "try 2\n" {
		t.Fatalf("retry's log = %q", got)
	}
	if got := readAll(t, base, first); got != "started\nresumed\n" {
		t.Fatalf("first try's log after the retry = %q", got)
	}
}

// A spare taken from under its pool (by another process's sweep) is not
// placed: the opener creates the log, which holds what was written.
func TestSparesTakenAwayFallBack(t *testing.T) {
	t.Parallel()
	base, s := newSpares(t)
	ready(t, s)
	entries, err := os.ReadDir(filepath.Join(base, SparesDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // as a sweep does: rename, then remove
		taken := filepath.Join(t.TempDir(), e.Name())
		if err := os.Rename(filepath.Join(base, SparesDir, e.Name()), taken); err != nil {
			t.Fatal(err)
		}
	}
	key := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: core.NoMapIndex, TryNumber: 1}
	write(t, s, key, "kept\n")
	if got := readAll(t, base, key); got != "kept\n" {
		t.Fatalf("log = %q", got)
	}
}

// A pool removes the spares older than staleSpare that it finds (a dead
// process's) and leaves the recent ones (a live process's).
func TestSparesSweepStaleOnes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, SparesDir)
	for _, name := range []string{"1-1-1", "2-2-1"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, spareLog), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleSpare)
	if err := os.Chtimes(filepath.Join(dir, "1-1-1"), old, old); err != nil {
		t.Fatal(err)
	}
	s := NewSpares(base)
	ready(t, s)
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "1-1-1")); !os.IsNotExist(err) {
		t.Fatalf("stale spare: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "2-2-1", spareLog)); err != nil {
		t.Fatalf("recent spare: %v", err)
	}
}

// A process that opens one first try's log (a one-task `weir dags test`)
// makes no spare; the second log opened with none ready starts the refill.
func TestSparesStartWithTheSecondLog(t *testing.T) {
	t.Parallel()
	base, s := newSpares(t)
	write(t, s, Key{DagID: "d", RunID: "r", TaskID: "a", MapIndex: core.NoMapIndex, TryNumber: 1}, "a\n")
	time.Sleep(50 * time.Millisecond)
	if n := spareCount(t, base); n != 0 {
		t.Fatalf("%d spares made after one log, want none", n)
	}
	write(t, s, Key{DagID: "d", RunID: "r", TaskID: "b", MapIndex: core.NoMapIndex, TryNumber: 1}, "b\n")
	deadline := time.Now().Add(10 * time.Second)
	for len(s.ready) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no spare made in 10 s after the second log")
		}
		time.Sleep(time.Millisecond)
	}
}
