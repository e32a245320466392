package storetest

import (
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// assetWriter is a task try's writer of asset state.
var assetWriter = core.StateWriter{Kind: core.StateWriterTask, DagID: "prod", RunID: "r1", TaskID: "load", MapIndex: 2, TryNumber: 3}

// allAssetState lists every asset's keys as name/key.
func (f *fixture) allAssetState() []string {
	return f.stateKeys(store.StateListParams{Kind: core.StateAsset})
}

// Asset state has no retention; a list of every asset orders by asset name
// and key, or by another field (docs/asset-state.md).
func testAssetStateNoRetentionListAll(t *testing.T, f *fixture) {
	o, c := f.assetScope("orders"), f.assetScope("customers")
	exp := f.now.Add(time.Hour)
	err := f.st.StateSet(f.ctx, &store.StateSetParams{Scope: o, Key: "k", Value: json.RawMessage(`1`), Now: f.now,
		By: assetWriter, ExpiresAt: &exp})
	wantErr(t, err, core.ErrInvalid, "set asset state with an expiry")
	f.setState(o, "b", `1`, assetWriter, nil, false)
	f.setState(c, "z", `1`, assetWriter, nil, false)
	f.setState(o, "a", `1`, assetWriter, nil, false)
	if got, want := f.allAssetState(), []string{"customers/z", "orders/a", "orders/b"}; !cmp.Equal(got, want) {
		t.Errorf("every asset's state = %v, want %v", got, want)
	}
	got := f.stateKeys(store.StateListParams{Kind: core.StateAsset, Page: store.Page{OrderBy: "-asset_name"}})
	// The unique key ends the order in the same direction.
	if want := []string{"orders/b", "orders/a", "customers/z"}; !cmp.Equal(got, want) {
		t.Errorf("ordered by -asset_name = %v, want %v", got, want)
	}
}

// A clear that keeps the watchers' keys (a task's) removes every other key
// of the asset, those merely beginning alike included, and no other
// asset's; a plain clear (the asset's own removal) removes them too.
func testAssetStateClearKeepsWatchers(t *testing.T, f *fixture) {
	o, c := f.assetScope("orders"), f.assetScope("customers")
	for _, k := range []string{core.WatcherCursorKey("landing"), "watcher/", "watchers", "Watcher/x", "w"} {
		f.setState(o, k, `1`, assetWriter, nil, false)
	}
	f.setState(c, core.WatcherCursorKey("x"), `1`, assetWriter, nil, false)
	f.setState(c, "k", `1`, assetWriter, nil, false)
	if _, err := f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: o, KeepWatchers: true}); err != nil {
		t.Fatal(err)
	}
	want := []string{"customers/k", "customers/watcher/x/cursor", "orders/watcher/", "orders/watcher/landing/cursor"}
	if got := f.allAssetState(); !cmp.Equal(got, want) {
		t.Errorf("after a clear keeping the watchers' keys: %v, want %v", got, want)
	}
	for _, k := range []string{"watcher/", core.WatcherCursorKey("landing")} {
		if !core.IsWatcherKey(k) {
			t.Errorf("IsWatcherKey(%q) is false, but the store kept it as a watcher's", k)
		}
	}
	if _, err := f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: o}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.allAssetState(), []string{"customers/k", "customers/watcher/x/cursor"}; !cmp.Equal(got, want) {
		t.Errorf("after a plain clear: %v, want %v", got, want)
	}
}

// State of an asset inactive for long enough is stale (listed and deleted
// in batches); an active asset's, or a recently deactivated one's, is not;
// deleting the asset row deletes its state (docs/state-store-cleanup.md).
func testAssetStateOrphansCascade(t *testing.T, f *fixture) {
	o, c := f.assetScope("orders"), f.assetScope("customers")
	for _, k := range []string{"a", "b", "c"} {
		f.setState(c, k, `1`, assetWriter, nil, false)
	}
	f.setState(o, "keep", `1`, assetWriter, nil, false)
	// The producer drops customers at now+1h: it is inactive from then on.
	must(t, f.assetDag(producer("prod", orders), f.at(time.Hour)), "re-sync producer without customers")

	stale := func(before time.Time, limit int) *store.StateStaleParams {
		return &store.StateStaleParams{Kind: core.StateAsset, Before: before, Limit: limit}
	}
	orphans, err := f.st.StateStale(f.ctx, stale(f.at(time.Hour), 0))
	must(t, err, "orphans inactive before the deactivation")
	if len(orphans) != 0 {
		t.Errorf("state of an asset inactive for no time is orphaned: %+v", orphans)
	}
	orphans, err = f.st.StateStale(f.ctx, stale(f.at(2*time.Hour), 0))
	must(t, err, "orphans")
	if len(orphans) != 3 || orphans[0].Scope.AssetName != "customers" || orphans[0].Key != "a" ||
		orphans[0].AssetInactiveSince == nil || !orphans[0].AssetInactiveSince.Equal(f.at(time.Hour)) {
		t.Fatalf("orphans = %+v, want customers' a, b, c with inactive_since", orphans)
	}
	n, err := f.st.StateDeleteStale(f.ctx, stale(f.at(2*time.Hour), 2))
	must(t, err, "delete a batch of orphans")
	if n != 2 {
		t.Errorf("first batch deleted %d, want 2", n)
	}
	n, err = f.st.StateDeleteStale(f.ctx, stale(f.at(2*time.Hour), 0))
	must(t, err, "delete the rest in one statement")
	if want := []string{"orders/keep"}; n != 1 || !cmp.Equal(f.allAssetState(), want) {
		t.Errorf("after the sweep: removed %d, keys %v, want %v (an active asset's state stays)", n, f.allAssetState(), want)
	}

	// Deleting an asset row takes its state with it (no store method deletes
	// assets: the foreign key is what is checked).
	db, ok := f.st.(interface{ DB() *sql.DB })
	if !ok {
		t.Fatalf("store %T has no DB() to delete an asset row with", f.st)
	}
	if _, err := db.DB().ExecContext(f.ctx, `DELETE FROM asset WHERE id = $1`, o.AssetID); err != nil {
		t.Fatalf("delete asset row: %v", err)
	}
	if got := f.allAssetState(); len(got) != 0 {
		t.Errorf("after the asset row was deleted its state is still there: %v", got)
	}
}
