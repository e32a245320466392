package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// assetEventObserver is the store's hook for the asset-event counter
// (weir_asset_events_created_total).
type assetEventObserver interface {
	ObserveAssetEvents(fn func(source string))
}

// testAssetEventObserved: the observer hears each committed asset event
// once with its source, after commit; an event of a rolled-back
// transaction, or one refused (a reused idempotency key), is never heard.
func testAssetEventObserved(t *testing.T, f *fixture) {
	obs, ok := f.st.(assetEventObserver)
	if !ok {
		t.Fatalf("%T has no ObserveAssetEvents", f.st)
	}
	var mu sync.Mutex
	var heard []string
	obs.ObserveAssetEvents(func(source string) { mu.Lock(); heard = append(heard, source); mu.Unlock() })
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")

	_, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI,
		IdempotencyKey: "k1", Now: f.now})
	must(t, err, "insert an API event")
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI,
		IdempotencyKey: "k1", Now: f.now})
	wantErr(t, err, core.ErrConflict, "reuse key k1")
	errUndo := errors.New("undo")
	err = f.st.WithTx(f.ctx, func(tx store.Store) error {
		if _, err := tx.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceTask,
			SourceDagID: "prod", SourceRunID: "r", SourceTaskID: "t", Now: f.now}); err != nil {
			return err
		}
		return errUndo
	})
	wantErr(t, err, errUndo, "a rolled-back transaction")
	must(t, f.st.WithTx(f.ctx, func(tx store.Store) error {
		for _, name := range []string{"orders", "customers"} {
			if _, err := tx.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: name, SourceKind: core.AssetSourceCallback,
				SourceDagID: "prod", SourceRunID: "r", Now: f.now}); err != nil {
				return err
			}
		}
		return nil
	}), "two events in one transaction")
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{core.AssetSourceAPI, core.AssetSourceCallback, core.AssetSourceCallback}, heard); diff != "" {
		t.Errorf("asset events heard (-want +got):\n%s", diff)
	}
}
