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
	ctx := t.Context()
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	pg, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	for name, st := range map[string]*sqlstore.Store{"sqlite": lite, "postgres": pg} {
		t.Run(name, func(t *testing.T) {
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
			for _, v := range []int64{7, latest} {
				if _, err := st.DB().ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = `+strconv.FormatInt(v, 10)); err != nil {
					t.Fatal(err)
				}
				got, err := st.MigrationStatus(ctx)
				if err != nil || got.UpToDate() || !slices.Contains(got.Pending, v) {
					t.Errorf("status with migration %d's record gone: %+v (%v), want it pending", v, got, err)
				}
			}
		})
	}
}
