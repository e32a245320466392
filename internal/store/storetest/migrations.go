package storetest

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// RunMigrations checks Migrate, MigrationStatus and Reset (what `weir db
// migrate|check|reset` use). newStore must return an unmigrated store on an
// empty database.
func RunMigrations(t *testing.T, newStore func(t *testing.T) *sqlstore.Store) {
	ctx := t.Context()
	st := newStore(t)
	status, err := st.MigrationStatus(ctx)
	must(t, err, "status of an empty database")
	if status.UpToDate() || status.Current != 0 || status.Latest == 0 || len(status.Pending) == 0 {
		t.Fatalf("empty database: %+v, want pending migrations and version 0", status)
	}
	must(t, st.Migrate(ctx), "migrate")
	status, err = st.MigrationStatus(ctx)
	must(t, err, "status after migrate")
	if !status.UpToDate() || status.Current != status.Latest {
		t.Fatalf("after migrate: %+v, want up to date", status)
	}
	must(t, st.Migrate(ctx), "migrate again (no-op)")

	must(t, st.PoolUpsert(ctx, &core.Pool{Name: "extra", Slots: 1}), "write data")
	must(t, st.Reset(ctx), "reset")
	status, err = st.MigrationStatus(ctx)
	must(t, err, "status after reset")
	if !status.UpToDate() {
		t.Fatalf("after reset: %+v, want up to date", status)
	}
	pools, err := st.PoolList(ctx, &store.PoolListParams{})
	must(t, err, "pools after reset")
	if len(pools) != 1 || pools[0].Name != core.DefaultPool {
		t.Errorf("pools after reset = %+v, want only the seeded default pool", pools)
	}
}
