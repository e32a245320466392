package statestore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

var (
	orders    = core.Asset{Name: "orders", URI: "s3://lake/orders"}
	customers = core.Asset{Name: "customers", URI: "s3://lake/customers"}
)

// defineAssets records DAG prod defining assets at t0 (as the DAG
// processor does); assets it defined before and no longer does become
// inactive since t0.
func defineAssets(t *testing.T, st store.Store, assets ...core.Asset) {
	t.Helper()
	ctx := context.Background()
	spec := core.DAG{DagID: "prod", Assets: assets, Tasks: []core.Task{{TaskID: "load", Operator: "noop"}}}
	if err := st.WithTx(ctx, func(tx store.Store) error {
		if _, _, err := tx.DagSync(ctx, &store.DagSyncParams{Spec: spec, Hash: "h" + string(rune('0'+len(assets))), Now: t0}); err != nil {
			return err
		}
		return tx.AssetSync(ctx, &store.AssetSyncParams{Spec: &spec, Now: t0})
	}); err != nil {
		t.Fatal(err)
	}
}

// docs/requirements.md#as-1, #as-3, #as-6: asset state through the Service, by name or uri:
// no retention (one is refused), the size limit, the writer's provenance.
func TestAssetStateService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := newService(t, statestore.Config{MaxValueBytes: 16})
	defineAssets(t, st, orders)
	byName, byURI := core.AssetScopeByName("orders"), core.AssetScopeByURI(orders.URI)
	ti := &core.TaskInstance{DagID: "d", RunID: "r1", TaskID: "t", MapIndex: 4, TryNumber: 2}
	e, err := svc.Set(ctx, byName, "watermark", []byte(` {"id": 7} `), statevalue.Retention{}, core.TaskWriter(ti))
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Value) != `{"id":7}` {
		t.Errorf("set returned %s", e.Value)
	}
	got, err := svc.Get(ctx, byURI, "watermark")
	if err != nil {
		t.Fatal(err)
	}
	want := core.StateWriter{Kind: core.StateWriterTask, DagID: "d", RunID: "r1", TaskID: "t", MapIndex: 4, TryNumber: 2}
	if string(got.Value) != `{"id":7}` || got.UpdatedBy != want || !got.UpdatedAt.Equal(t0) || got.ExpiresAt != nil {
		t.Errorf("get by uri = %+v, want the value written by name, by %+v, no expiry", got, want)
	}
	if _, err := svc.Set(ctx, byName, "k", []byte(`1`), retention(t, "6h"), core.UserWriter("ada")); !errors.Is(err, core.ErrInvalid) ||
		!strings.Contains(err.Error(), "no retention") {
		t.Errorf("asset state with a retention: %v, want refused (AS-1)", err)
	}
	if _, err := svc.Set(ctx, byName, "k", []byte(`"0123456789abcdef"`), statevalue.Retention{}, core.UserWriter("ada")); !errors.Is(err, core.ErrTooLarge) {
		t.Errorf("oversized asset value: %v, want ErrTooLarge", err)
	}
	for _, bad := range []string{`null`, `NaN`, `[1e999]`} {
		if _, err := svc.Set(ctx, byName, "k", []byte(bad), statevalue.Retention{}, core.UserWriter("ada")); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("asset value %s: %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := svc.Get(ctx, byName, "k"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("a refused write stored something: %v", err)
	}
	if err := svc.Delete(ctx, byName, "absent"); err != nil {
		t.Errorf("delete absent asset key: %v", err)
	}
	if err := svc.Clear(ctx, byURI, false); err != nil {
		t.Fatal(err)
	}
	if rows, _, _ := svc.List(ctx, &store.StateListParams{Kind: core.StateAsset, AssetID: mustAsset(t, svc, "orders")}); len(rows) != 0 {
		t.Errorf("after clear: %+v", rows)
	}
}

func mustAsset(t *testing.T, svc *statestore.Service, name string) int64 {
	t.Helper()
	a, err := svc.ResolveAsset(context.Background(), core.AssetScopeByName(name))
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// docs/requirements.md#as-4: only declared assets (inlets or outlets, once each); reads of
// others only with allow_undeclared_asset_reads; writes never.
func TestCheckAssetAccess(t *testing.T) {
	t.Parallel()
	dag := &core.DAG{DagID: "d", Assets: []core.Asset{orders, customers},
		Tasks: []core.Task{{TaskID: "t", Inlets: []core.AssetRef{{Name: "orders"}, {Alias: "dyn"}},
			Outlets: []core.AssetRef{{URI: orders.URI}}}}}
	declared := statestore.DeclaredAssets(dag, "t")
	if len(declared) != 1 || declared[0].Name != "orders" {
		t.Fatalf("declared = %+v, want orders once (an inlet and an outlet; the alias is not concrete)", declared)
	}
	strict := statestore.New(nil, nil, statestore.Config{})
	relaxed := statestore.New(nil, nil, statestore.Config{AllowUndeclaredAssetReads: true})
	cust := &core.AssetModel{Name: "customers"}
	ord := &core.AssetModel{Name: "orders"}
	for _, c := range []struct {
		name  string
		svc   *statestore.Service
		asset *core.AssetModel
		write bool
		ok    bool
	}{
		{"declared read", strict, ord, false, true},
		{"declared write", strict, ord, true, true},
		{"undeclared read", strict, cust, false, false},
		{"undeclared write", strict, cust, true, false},
		{"undeclared read, relaxed", relaxed, cust, false, true},
		{"undeclared write, relaxed", relaxed, cust, true, false},
	} {
		err := c.svc.CheckAssetAccess("t", declared, c.asset, c.write)
		if c.ok != (err == nil) || (err != nil && (!errors.Is(err, core.ErrForbidden) ||
			!strings.Contains(err.Error(), `asset "customers"`) || !strings.Contains(err.Error(), `declared: "orders"`))) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// docs/requirements.md#as-2: the shorthand needs exactly one concrete asset.
func TestShorthandAsset(t *testing.T) {
	t.Parallel()
	if a, err := core.ShorthandAsset([]core.Asset{orders}, "hint"); err != nil || a.Name != "orders" {
		t.Errorf("one asset: %v %v", a, err)
	}
	for _, n := range []int{0, 2} {
		_, err := core.ShorthandAsset(make([]core.Asset, n), "pass --name")
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "task has "+string(rune('0'+n))+" concrete inlets and outlets; pass --name") {
			t.Errorf("%d assets: %v", n, err)
		}
	}
}

// docs/requirements.md#as-5, #gc-1: cleanup sweeps the state of assets inactive for longer
// than asset_state_orphan_retention_days (listed on a dry run, counted
// apart from task state), keeps an active asset's, and with 0 sweeps none.
func TestCleanupSweepsOrphanedAssetState(t *testing.T) {
	t.Parallel()
	for _, days := range []int{0, 30} {
		ctx := context.Background()
		svc, st, clk := newService(t, statestore.Config{AssetOrphanRetentionDays: days, CleanupBatchSize: 1})
		defineAssets(t, st, orders, customers)
		for _, a := range []string{"orders", "customers"} {
			for _, k := range []string{"a", "b"} {
				if _, err := svc.Set(ctx, core.AssetScopeByName(a), k, []byte(`1`), statevalue.Retention{}, core.UserWriter("u")); err != nil {
					t.Fatal(err)
				}
			}
		}
		defineAssets(t, st, orders) // customers inactive since t0
		clk.Advance(29 * 24 * time.Hour)
		rep, err := svc.Cleanup(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Orphans) != 0 {
			t.Errorf("days=%d: after 29 days the dry run lists %+v", days, rep.Orphans)
		}
		clk.Advance(2 * 24 * time.Hour)
		rep, err = svc.Cleanup(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		wantOrphans := map[int]int{0: 0, 30: 2}[days]
		if len(rep.Orphans) != wantOrphans || (wantOrphans > 0 && rep.Orphans[0].Scope.AssetName != "customers") {
			t.Errorf("days=%d: after 31 days the dry run lists %+v, want %d rows of customers", days, rep.Orphans, wantOrphans)
		}
		if rows, _ := allAssetState(t, st); len(rows) != 4 {
			t.Errorf("days=%d: the dry run deleted rows: %d left", days, len(rows))
		}
		rep, err = svc.Cleanup(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := allAssetState(t, st)
		if rep.OrphansDeleted != int64(wantOrphans) || rep.Deleted != 0 || len(rows) != 4-wantOrphans {
			t.Errorf("days=%d: cleanup deleted %d orphans and %d task rows; %d asset rows left", days, rep.OrphansDeleted, rep.Deleted, len(rows))
		}
		for _, r := range rows {
			if days > 0 && r.Scope.AssetName != "orders" {
				t.Errorf("days=%d: %s/%s survived the sweep", days, r.Scope.AssetName, r.Key)
			}
		}
	}
}

// allAssetState lists every asset's state.
func allAssetState(t *testing.T, st store.Store) ([]core.StateEntry, error) {
	t.Helper()
	return st.StateList(context.Background(), &store.StateListParams{Kind: core.StateAsset})
}
