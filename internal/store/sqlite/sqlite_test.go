package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/store/storetest"
)

// openTest opens a migrated store on a new file, closed when t ends.
func openTest(t testing.TB) *sqlstore.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
}

func TestMigrations(t *testing.T) {
	storetest.RunMigrations(t, func(t *testing.T) *sqlstore.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	})
}

func TestOpenRejectsMemory(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), ":memory:", sqlite.Options{}); err == nil {
		t.Fatal("Open(:memory:) succeeded; separate read and write pools need a file")
	}
}

func TestPragmas(t *testing.T) {
	st := openTest(t)
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1"} {
		var got string
		if err := st.DB().QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	if n := st.DB().Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer pool allows %d connections, want exactly 1", n)
	}
}

func BenchmarkClaimStartFinish(b *testing.B) {
	for _, bc := range []struct {
		name           string
		batch, workers int
	}{{"batch1", 1, 1}, {"batch16", 16, 1}, {"batch16x4workers", 16, 4}} {
		b.Run(bc.name, func(b *testing.B) {
			storetest.BenchClaimStartFinish(b, openTest(b), bc.batch, bc.workers)
		})
	}
}
