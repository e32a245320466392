package sqlite_test

import (
	"testing"

	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/store/storetest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return sqlitetest.Open(t) })
}

func TestMigrations(t *testing.T) {
	storetest.RunMigrations(t, func(t *testing.T) *sqlstore.Store { return sqlitetest.OpenUnmigrated(t) })
}

func TestOpenRejectsMemory(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), ":memory:", sqlite.Options{}); err == nil {
		t.Fatal("Open(:memory:) succeeded; separate read and write pools need a file")
	}
}

func TestPragmas(t *testing.T) {
	st := sqlitetest.Open(t)
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1", "wal_autocheckpoint": "16000"} {
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
	storetest.RunBenchClaimStartFinish(b, func(b *testing.B) store.Store { return sqlitetest.Open(b) })
}
