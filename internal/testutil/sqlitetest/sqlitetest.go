// Package sqlitetest opens throwaway SQLite stores for tests: one database
// file per test, migrated, and closed when the test ends. Connections are
// encrypted with secretstest.Box.
package sqlitetest

import (
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

// Open opens a migrated SQLite store in a new file under t.TempDir(); it is
// closed when t ends, and a failed close fails the test.
func Open(t testing.TB) *sqlstore.Store {
	t.Helper()
	st := OpenUnmigrated(t)
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}

// OpenUnmigrated opens a store like Open but applies no migrations, for tests
// of migrations themselves.
func OpenUnmigrated(t testing.TB) *sqlstore.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{Secrets: secretstest.Box()})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return st
}
