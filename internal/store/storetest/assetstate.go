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

// taskWriter is a task try's provenance as the Execution API records it.
var taskWriter = store.StateWriter{Kind: store.StateWriterTask, DagID: "prod", RunID: "r1", TaskID: "load",
	MapIndex: 2, TryNumber: 3}

// assetID syncs producer DAG prod with orders and customers and returns the
// id of the asset named name.
func (f *fixture) assetID(name string) int64 {
	f.t.Helper()
	if _, err := f.st.AssetGetByName(f.ctx, name); err != nil {
		must(f.t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	}
	a, err := f.st.AssetGetByName(f.ctx, name)
	must(f.t, err, "get asset "+name)
	return a.ID
}

// setAssetState writes key = value of asset id by a task try.
func (f *fixture) setAssetState(id int64, key, value string) {
	f.t.Helper()
	must(f.t, f.st.AssetStateSet(f.ctx, &store.AssetStateSetParams{AssetID: id, Key: key, Value: json.RawMessage(value),
		Now: f.now, By: taskWriter}), "set asset state "+key)
}

// assetStateKeys lists every asset's keys as name/key.
func (f *fixture) assetStateKeys() []string {
	f.t.Helper()
	all, err := f.st.AssetStateList(f.ctx, 0)
	must(f.t, err, "list asset state")
	out := []string{}
	for _, e := range all {
		out = append(out, e.AssetName+"/"+e.Key)
	}
	return out
}

// SPEC AS-1, AS-3, AS-6: every JSON type round-trips with its exact text,
// with the writer's full provenance; an overwrite replaces both; there is
// no expiry to store.
func testAssetStateRoundTrip(t *testing.T, f *fixture) {
	id := f.assetID("orders")
	values := map[string]string{
		"int":    `42`,
		"big":    `9007199254740993`,
		"float":  `3.25`,
		"string": `"héllo \"quoted\" ✓"`,
		"bool":   `true`,
		"list":   `[1,"two",[3],{"four":4}]`,
		"object": `{"watermark":"2026-01-01T00:00:00Z","rows":{"n":[1,null]}}`,
	}
	for k, v := range values {
		f.setAssetState(id, k, v)
	}
	for k, v := range values {
		e, err := f.st.AssetStateGet(f.ctx, id, k)
		must(t, err, "get "+k)
		want := &store.AssetStateEntry{AssetID: id, AssetName: "orders", AssetURI: orders.URI, Key: k,
			Value: json.RawMessage(v), UpdatedAt: f.now, UpdatedBy: taskWriter}
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("asset state %s (-want +got):\n%s", k, diff)
		}
	}
	// Overwrite by a user: the value and the whole provenance change.
	user := store.StateWriter{Kind: store.StateWriterUser, MapIndex: core.NoMapIndex, User: "ada"}
	must(t, f.st.AssetStateSet(f.ctx, &store.AssetStateSetParams{AssetID: id, Key: "int", Value: json.RawMessage(`43`),
		Now: f.at(time.Minute), By: user}), "overwrite")
	e, err := f.st.AssetStateGet(f.ctx, id, "int")
	must(t, err, "get overwritten")
	if string(e.Value) != "43" || e.UpdatedBy != user || !e.UpdatedAt.Equal(f.at(time.Minute)) {
		t.Errorf("overwritten entry = %+v, want 43 by user ada", e)
	}

	_, err = f.st.AssetStateGet(f.ctx, id, "absent")
	wantErr(t, err, core.ErrNotFound, "get absent key")
	_, err = f.st.AssetStateGet(f.ctx, f.assetID("customers"), "int")
	wantErr(t, err, core.ErrNotFound, "another asset is another scope")
	err = f.st.AssetStateSet(f.ctx, &store.AssetStateSetParams{AssetID: 999999, Key: "k", Value: json.RawMessage(`1`),
		Now: f.now, By: taskWriter})
	wantErr(t, err, core.ErrNotFound, "set on an unknown asset")
	err = f.st.AssetStateSet(f.ctx, &store.AssetStateSetParams{AssetID: id, Key: "k", Value: json.RawMessage(`{bad`),
		Now: f.now, By: taskWriter})
	wantErr(t, err, core.ErrInvalid, "set invalid JSON")
	err = f.st.AssetStateSet(f.ctx, &store.AssetStateSetParams{AssetID: id, Key: "k", Value: json.RawMessage(`1`),
		Now: f.now, By: store.StateWriter{Kind: "robot"}})
	wantErr(t, err, core.ErrInvalid, "set with an unknown writer kind")
}

// SPEC AS-3: delete is a no-op when absent; clear takes every key of one
// asset and nothing of another.
func testAssetStateDeleteClear(t *testing.T, f *fixture) {
	o, c := f.assetID("orders"), f.assetID("customers")
	f.setAssetState(o, "a", `1`)
	f.setAssetState(o, "b", `2`)
	f.setAssetState(c, "a", `3`)
	n, err := f.st.AssetStateDelete(f.ctx, o, "absent")
	must(t, err, "delete absent key")
	if n != 0 {
		t.Errorf("deleting an absent key removed %d rows", n)
	}
	n, err = f.st.AssetStateDelete(f.ctx, o, "a")
	must(t, err, "delete a")
	if want := []string{"customers/a", "orders/b"}; n != 1 || !cmp.Equal(f.assetStateKeys(), want) {
		t.Errorf("after delete of orders/a: removed %d, keys %v, want %v", n, f.assetStateKeys(), want)
	}
	f.setAssetState(o, "c", `4`)
	n, err = f.st.AssetStateDelete(f.ctx, o, "")
	must(t, err, "clear orders")
	if want := []string{"customers/a"}; n != 2 || !cmp.Equal(f.assetStateKeys(), want) {
		t.Errorf("after clear of orders: removed %d, keys %v, want %v", n, f.assetStateKeys(), want)
	}
	got, err := f.st.AssetStateList(f.ctx, o)
	must(t, err, "list cleared asset")
	if len(got) != 0 {
		t.Errorf("cleared asset lists %+v", got)
	}
}

// SPEC AS-5: state of an asset inactive for long enough is an orphan (listed
// and deleted in batches); an active asset's, or a recently deactivated
// one's, is not; deleting the asset row deletes its state (cascade).
func testAssetStateOrphansCascade(t *testing.T, f *fixture) {
	o, c := f.assetID("orders"), f.assetID("customers")
	for _, k := range []string{"a", "b", "c"} {
		f.setAssetState(c, k, `1`)
	}
	f.setAssetState(o, "keep", `1`)
	// The producer drops customers at now+1h: it is inactive from then on.
	must(t, f.assetDag(producer("prod", orders), f.at(time.Hour)), "re-sync producer without customers")

	orphans, err := f.st.AssetStateOrphans(f.ctx, f.at(time.Hour), 0)
	must(t, err, "orphans inactive before the deactivation")
	if len(orphans) != 0 {
		t.Errorf("state of an asset inactive for no time is orphaned: %+v", orphans)
	}
	orphans, err = f.st.AssetStateOrphans(f.ctx, f.at(2*time.Hour), 0)
	must(t, err, "orphans")
	if len(orphans) != 3 || orphans[0].AssetName != "customers" || orphans[0].Key != "a" ||
		orphans[0].AssetInactiveSince == nil || !orphans[0].AssetInactiveSince.Equal(f.at(time.Hour)) {
		t.Fatalf("orphans = %+v, want customers' a, b, c with inactive_since", orphans)
	}
	n, err := f.st.AssetStateDeleteOrphans(f.ctx, f.at(2*time.Hour), 2)
	must(t, err, "delete a batch of orphans")
	if n != 2 {
		t.Errorf("first batch deleted %d, want 2", n)
	}
	n, err = f.st.AssetStateDeleteOrphans(f.ctx, f.at(2*time.Hour), 0)
	must(t, err, "delete the rest in one statement")
	if want := []string{"orders/keep"}; n != 1 || !cmp.Equal(f.assetStateKeys(), want) {
		t.Errorf("after the sweep: removed %d, keys %v, want %v (an active asset's state stays)", n, f.assetStateKeys(), want)
	}

	// Deleting an asset row takes its state with it (no store method deletes
	// assets: the foreign key is what is checked).
	db, ok := f.st.(interface{ DB() *sql.DB })
	if !ok {
		t.Fatalf("store %T has no DB() to delete an asset row with", f.st)
	}
	if _, err := db.DB().ExecContext(f.ctx, `DELETE FROM asset WHERE id = $1`, o); err != nil {
		t.Fatalf("delete asset row: %v", err)
	}
	if got := f.assetStateKeys(); len(got) != 0 {
		t.Errorf("after the asset row was deleted its state is still there: %v", got)
	}
}
