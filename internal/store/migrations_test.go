package store_test

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// The schema's status, answered by one statement when every migration is
// recorded as applied (sqlstore.allApplied), agrees with goose's: up to
// date after Migrate; a migration whose record is missing, the newest or
// one before it, is pending again.
func TestMigrationStatusOnEachEngine(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		testMigrationStatus(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(t.Context(), pgtest.DSN(t), postgres.Options{NoListen: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		testMigrationStatus(t, st)
	})
}

func testMigrationStatus(t *testing.T, st *sqlstore.Store) {
	ctx := t.Context()
	fresh, err := st.MigrationStatus(ctx)
	if err != nil || fresh.Current != 0 || len(fresh.Pending) < 2 || fresh.Pending[len(fresh.Pending)-1] != fresh.Latest {
		t.Fatalf("a new database's status: %+v (%v), want every migration pending", fresh, err)
	}
	latest := fresh.Latest
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrating an up-to-date database: %v", err)
	}
	got, err := st.MigrationStatus(ctx)
	if err != nil || !got.UpToDate() || got.Current != latest || got.Latest != latest {
		t.Fatalf("status after Migrate: %+v (%v), want up to date at %d", got, err, latest)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := st.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// A newer binary's migration on top: no pending one, the newer version
	// reported (an older binary during an upgrade).
	exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (` + strconv.FormatInt(latest+1, 10) + `, TRUE)`)
	if got, err := st.MigrationStatus(ctx); err != nil || !got.UpToDate() || got.Current != latest+1 || !got.Newer() {
		t.Errorf("status with a newer binary's migration applied: %+v (%v), want current %d, newer, none pending", got, err, latest+1)
	}
	exec(`DELETE FROM goose_db_version WHERE version_id = ` + strconv.FormatInt(latest+1, 10))
	// A middle record gone and a version this binary does not know in its
	// place: as many records as migrations, the newest there.
	exec(`DELETE FROM goose_db_version WHERE version_id = 7`)
	exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (13, TRUE)`)
	if got, err := st.MigrationStatus(ctx); err == nil && (got.UpToDate() || !slices.Contains(got.Pending, 7)) {
		t.Errorf("status with migration 7's record replaced by an unknown 13: %+v, want 7 pending (or an error)", got)
	}
	exec(`DELETE FROM goose_db_version WHERE version_id = 13`)
	exec(`DELETE FROM goose_db_version WHERE version_id = ` + strconv.FormatInt(latest, 10))
	if got, err := st.MigrationStatus(ctx); err != nil || got.UpToDate() || !slices.Contains(got.Pending, latest) {
		t.Errorf("status with the newest migration's record gone: %+v (%v), want it pending", got, err)
	}
}
