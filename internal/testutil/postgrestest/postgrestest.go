// Package postgrestest opens throwaway PostgreSQL stores for tests: a fresh
// database per test on the pgtest server, migrated, and closed when the
// test ends (the PostgreSQL counterpart of sqlitetest). The test binary's
// TestMain must call pgtest.Main.
package postgrestest

import (
	"testing"

	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

// Open opens a migrated store on a fresh database (pgtest.DSN skips or
// fails t without PostgreSQL). LISTEN is off: notifications stay in the
// process.
func Open(t testing.TB) *sqlstore.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), pgtest.DSN(t), postgres.Options{Secrets: secretstest.Box(), NoListen: true})
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}
