package sqlite_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/store/sqlite"
)

// assertModes checks that the database file and its -wal and -shm exist
// and only their owner may read them.
func assertModes(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != sqlite.FileMode {
			t.Errorf("%s has mode %v, want %v", filepath.Base(p), got, sqlite.FileMode)
		}
	}
}

// A new database and its WAL are created readable by their owner only
// (issue 13: weir.db and its WAL were created 0644 with secrets inside).
func TestNewDatabaseFilesAreOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	st, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(t.Context()); err != nil { // writes: the WAL and shm exist
		t.Fatal(err)
	}
	assertModes(t, path)
}

// Files left world-readable by an older version are tightened and logged.
func TestLooseDatabaseFilesAreTightened(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	st, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logged bytes.Buffer
	st2, err := sqlite.Open(t.Context(), path, sqlite.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	st.Close()
	assertModes(t, path)
	if n := strings.Count(logged.String(), "tightened the mode of a path others could read"); n != 3 {
		t.Fatalf("logged %d tightenings, want 3:\n%s", n, logged.String())
	}
}
