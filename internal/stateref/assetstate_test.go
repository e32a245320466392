package stateref_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// The assets of assetDAG: task t writes orders (an outlet named by uri)
// and reads customers (an inlet); ledger is defined but not declared.
var (
	orders    = core.Asset{Name: "orders", URI: "s3://lake/orders"}
	customers = core.Asset{Name: "customers", URI: "s3://lake/customers"}
	ledger    = core.Asset{Name: "ledger", URI: "s3://lake/ledger"}
	byName    = core.AssetScopeByName(orders.Name)
	byURI     = core.AssetScopeByURI(orders.URI)
)

// assetRun starts task t of a DAG declaring orders and customers and
// returns its client.
func (e *env) assetRun(t *testing.T) *execclient.Client {
	t.Helper()
	dag := core.DAG{DagID: "ad", Assets: []core.Asset{orders, customers, ledger}, Tasks: []core.Task{{TaskID: "t",
		Operator: "noop", Inlets: []core.AssetRef{{Name: customers.Name}}, Outlets: []core.AssetRef{{URI: orders.URI}}}}}
	return e.startRun(t, dag, "r1", 1)[0]
}

// assetRows returns every asset-state row as "asset/key" → the stored value.
func (e *env) assetRows(t *testing.T) map[string]string {
	t.Helper()
	all, err := e.Store.StateList(context.Background(), &store.StateListParams{Kind: core.StateAsset})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range all {
		out[r.Scope.AssetName+"/"+r.Key] = string(r.Value)
	}
	return out
}

// docs/requirements.md#be-2 for asset state: a value over max_value_bytes round-trips
// through the object store; the row holds only the reference
// asset/<name>/<key>; the asset named by uri and by name is one object.
func TestAssetStateLargeValueNameAndURI(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			c := e.assetRun(t)
			url := b.url(t)
			st := openStore(t, url)
			as := wrap(t, c, st, nil)
			big := bigValue(20 * maxValueBytes)

			if err := c.StateSet(ctx, byName, "big", big, ""); !errors.Is(err, core.ErrTooLarge) {
				t.Fatalf("set of %d bytes without the backend: %v, want too large", len(big), err)
			}
			// Written by uri: the reference is built from the name.
			if err := as.StateSet(ctx, byURI, "big", big, ""); err != nil {
				t.Fatalf("set by uri through the backend: %v", err)
			}
			const ref = "asset/orders/big"
			if got, want := e.assetRows(t)["orders/big"], `{"__weir_state_ref__":"`+ref+`"}`; got != want {
				t.Errorf("database row of orders/big = %.80s, want only the reference %s", got, want)
			}
			if obj, err := st.Get(ctx, ref); err != nil || !bytes.Equal(obj, big) {
				t.Errorf("object %s = %d bytes (%v), want the %d-byte value", ref, len(obj), err, len(big))
			}
			// Read by name and by uri, through a store opened anew (as the
			// next run's worker has).
			as2 := wrap(t, c, openStore(t, url), nil)
			for _, r := range []core.StateScope{byName, byURI} {
				if got, err := as2.StateGet(ctx, r, "big"); err != nil || !bytes.Equal(got, big) {
					t.Errorf("get big by %s = %d bytes, %v; want the %d-byte value", r, len(got), err, len(big))
				}
			}
			// Written again by name: the same object, not a second one.
			if err := as2.StateSet(ctx, byName, "big", json.RawMessage(`{"v": 2}`), ""); err != nil {
				t.Fatal(err)
			}
			if got, err := as.StateGet(ctx, byURI, "big"); err != nil || string(got) != `{"v":2}` {
				t.Errorf("get by uri after a set by name = %s, %v", got, err)
			}
			if keys := list(t, st, ""); !slices.Equal(keys, []string{ref}) {
				t.Errorf("objects = %v, want only %s", keys, ref)
			}
			if _, err := as.StateGet(ctx, core.AssetScopeByName(customers.Name), "big"); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("get of an absent key of the inlet: %v, want not found", err)
			}
		})
	}
}

// docs/requirements.md#be-2, #as-2: a write to an asset the task does not declare is
// refused before any object is written, so it cannot change what the
// asset's own rows point to; bad values are refused before writing too.
func TestAssetStateRefusedBeforeWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	c := e.assetRun(t)
	st := openStore(t, "file://"+filepath.Join(t.TempDir(), "state"))
	as := wrap(t, c, st, nil)
	for _, r := range []core.StateScope{core.AssetScopeByName(ledger.Name), core.AssetScopeByURI(ledger.URI), core.AssetScopeByName("nope")} {
		err := as.StateSet(ctx, r, "k", json.RawMessage(`1`), "")
		if !errors.Is(err, core.ErrForbidden) || !strings.Contains(err.Error(), `declared: "customers", "orders"`) {
			t.Errorf("set of %s: %v, want forbidden listing the declared assets", r, err)
		}
	}
	if err := as.StateSet(ctx, byName, "n", json.RawMessage(`null`), ""); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("set null: %v, want invalid", err)
	}
	if keys := list(t, st, ""); len(keys) != 0 {
		t.Errorf("objects %v, want none", keys)
	}
	if rows := e.assetRows(t); len(rows) != 0 {
		t.Errorf("rows %v, want none", rows)
	}
}

// docs/requirements.md#be-2: delete removes the row first, then the object (a failed object
// delete is logged and repaired by the next set of the key); a refused row
// delete leaves the object; clear removes the asset's rows, then every
// object under asset/<name>/, and no other asset's.
func TestAssetStateDeleteClearOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	c := e.assetRun(t)
	root := filepath.Join(t.TempDir(), "state")
	st := openStore(t, "file://"+root)
	var log bytes.Buffer
	as := wrap(t, c, st, &log)
	for _, k := range []string{"a", "b"} {
		if err := as.StateSet(ctx, byName, k, bigValue(2*maxValueBytes), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := as.StateSet(ctx, core.AssetScopeByName(customers.Name), "c", json.RawMessage(`1`), ""); err != nil {
		t.Fatal(err) // an inlet is declared too, so it may be written
	}

	// Delete by uri while the asset's directory refuses deletes.
	unblock := blockDeletes(t, filepath.Join(root, "asset", "orders"))
	if err := as.StateDelete(ctx, byURI, "a"); err != nil {
		t.Fatalf("delete with a failing object delete: %v, want nil (the row is gone)", err)
	}
	if _, ok := e.assetRows(t)["orders/a"]; ok {
		t.Error("the row of orders/a is still there after delete")
	}
	if _, err := st.Get(ctx, "asset/orders/a"); err != nil {
		t.Errorf("the object was expected to survive the failed delete: %v", err)
	}
	if !strings.Contains(log.String(), "could not be") || !strings.Contains(log.String(), "asset/orders/a") {
		t.Errorf("log does not report the failed object delete:\n%s", log.String())
	}
	unblock()
	if err := as.StateSet(ctx, byName, "a", json.RawMessage(`"v2"`), ""); err != nil {
		t.Fatal(err)
	}
	if got, err := as.StateGet(ctx, byURI, "a"); err != nil || string(got) != `"v2"` {
		t.Errorf("get after the repairing set = %s, %v", got, err)
	}

	// Clear by uri: rows, then every object of orders; customers' stay.
	if err := as.StateClear(ctx, byURI, false); err != nil {
		t.Fatal(err)
	}
	if keys := list(t, st, "asset/orders/"); len(keys) != 0 {
		t.Errorf("after clear: objects %v remain", keys)
	}
	if keys := list(t, st, ""); !slices.Equal(keys, []string{"asset/customers/c"}) {
		t.Errorf("after clearing orders: objects %v, want customers' only", keys)
	}
	if rows := e.assetRows(t); len(rows) != 1 {
		t.Errorf("after clearing orders: rows %v, want customers/c only", rows)
	}

	// Row first: once the try has finished the API refuses the delete and
	// the clear, and the object stays.
	if _, err := c.SetState(ctx, c.Identity.TIID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if err := as.StateDelete(ctx, core.AssetScopeByName(customers.Name), "c"); err == nil {
		t.Error("delete by a finished try succeeded")
	}
	if err := as.StateClear(ctx, core.AssetScopeByURI(customers.URI), false); err == nil {
		t.Error("clear by a finished try succeeded")
	}
	if _, err := st.Get(ctx, "asset/customers/c"); err != nil {
		t.Errorf("a refused row delete removed the object: %v", err)
	}
}
