package stateref_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
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
// asset/<name>/<key>/<id>; the asset named by uri and by name is one
// asset, and a set by either replaces the other's object.
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
			as := wrap(t, c, st)
			big := bigValue(20 * maxValueBytes)

			if err := c.StateSet(ctx, byName, "big", big, ""); !errors.Is(err, core.ErrTooLarge) {
				t.Fatalf("set of %d bytes without the backend: %v, want too large", len(big), err)
			}
			// Written by uri: the reference is built from the name.
			if err := as.StateSet(ctx, byURI, "big", big, ""); err != nil {
				t.Fatalf("set by uri through the backend: %v", err)
			}
			ref := refIn(t, e.assetRows(t)["orders/big"])
			if !strings.HasPrefix(ref, "asset/orders/big/") {
				t.Errorf("reference of orders/big = %s, want asset/orders/big/<id>", ref)
			}
			if obj, err := st.Get(ctx, ref); err != nil || !bytes.Equal(obj, big) {
				t.Errorf("object %s = %d bytes (%v), want the %d-byte value", ref, len(obj), err, len(big))
			}
			// Read by name and by uri, through a store opened anew (as the
			// next run's worker has).
			as2 := wrap(t, c, openStore(t, url))
			for _, r := range []core.StateScope{byName, byURI} {
				if got, err := as2.StateGet(ctx, r, "big"); err != nil || !bytes.Equal(got, big) {
					t.Errorf("get big by %s = %d bytes, %v; want the %d-byte value", r, len(got), err, len(big))
				}
			}
			// Written again by name: one object once the replaced one is swept.
			if err := as2.StateSet(ctx, byName, "big", json.RawMessage(`{"v": 2}`), ""); err != nil {
				t.Fatal(err)
			}
			if got, err := as.StateGet(ctx, byURI, "big"); err != nil || string(got) != `{"v":2}` {
				t.Errorf("get by uri after a set by name = %s, %v", got, err)
			}
			e.mustSweep(t, st)
			if keys := list(t, st, ""); len(keys) != 1 || keys[0] == ref || !strings.HasPrefix(keys[0], "asset/orders/big/") {
				t.Errorf("objects = %v, want only the new one of orders/big", keys)
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
	as := wrap(t, c, st)
	for _, r := range []core.StateScope{core.AssetScopeByName(ledger.Name), core.AssetScopeByURI(ledger.URI)} {
		err := as.StateSet(ctx, r, "k", json.RawMessage(`1`), "")
		if !errors.Is(err, core.ErrForbidden) || !strings.Contains(err.Error(), `"customers"`) || !strings.Contains(err.Error(), `"orders"`) {
			t.Errorf("set of %s: %v, want forbidden listing the declared assets", r, err)
		}
	}
	if err := as.StateSet(ctx, core.AssetScopeByName("nope"), "k", json.RawMessage(`1`), ""); !execclient.IsUnknownAsset(err) {
		t.Errorf("set of an unknown asset: %v, want unknown asset", err)
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

// docs/state-backends.md#sweeping for asset state: a delete and a clear
// (by uri) remove the rows, and the sweep the objects of that asset only;
// the asset's deletion does too; a finished try's delete and clear are
// refused and leave row and object.
func TestAssetStateDeleteClearSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	c := e.assetRun(t)
	st := openStore(t, "file://"+filepath.Join(t.TempDir(), "state"))
	as := wrap(t, c, st)
	for _, k := range []string{"a", "b", "c"} {
		if err := as.StateSet(ctx, byName, k, bigValue(2*maxValueBytes), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := as.StateSet(ctx, core.AssetScopeByName(customers.Name), "c", json.RawMessage(`1`), ""); err != nil {
		t.Fatal(err) // an inlet is declared too, so it may be written
	}
	if err := as.StateDelete(ctx, byURI, "a"); err != nil {
		t.Fatal(err)
	}
	if err := as.StateClear(ctx, byURI, false); err != nil {
		t.Fatal(err)
	}
	if n := e.mustSweep(t, st); n != 3 || len(list(t, st, "asset/orders/")) != 0 || len(list(t, st, "asset/customers/")) != 1 {
		t.Errorf("sweep after a delete and a clear of orders deleted %d, left %v; want customers' object only", n, list(t, st, ""))
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
	if n := e.mustSweep(t, st); n != 0 || len(list(t, st, "asset/customers/")) != 1 {
		t.Errorf("after refused removals the sweep deleted %d, left %v", n, list(t, st, ""))
	}

	// The asset's deletion takes its state, and the sweep its object.
	if _, err := e.Store.DB().ExecContext(ctx, `DELETE FROM asset WHERE name = 'customers'`); err != nil {
		t.Fatal(err)
	}
	if n := e.mustSweep(t, st); n != 1 || len(list(t, st, "")) != 0 {
		t.Errorf("sweep after the asset's deletion deleted %d, left %v", n, list(t, st, ""))
	}
}
