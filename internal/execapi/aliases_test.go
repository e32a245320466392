package execapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

// aliasDAG: "export" and "fails" add to alias dyn (an outlet); "plain"
// updates orders only; "reader" has dyn as an inlet.
func aliasDAG() core.DAG {
	dyn := []core.AssetRef{{Alias: "dyn"}}
	return core.DAG{DagID: "d", Assets: []core.Asset{ordersAsset, customersAsset}, Tasks: []core.Task{
		{TaskID: "export", Operator: "noop", Outlets: dyn},
		{TaskID: "fails", Operator: "noop", Outlets: dyn},
		{TaskID: "plain", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}},
		{TaskID: "reader", Operator: "noop", Inlets: dyn},
	}}
}

// docs/requirements.md#as-2 with aliases, over HTTP: a running task adds a concrete asset to
// an alias outlet (403 for an alias it does not declare, 404 for an unknown
// or inactive asset); on success the asset gets an event and the alias
// resolves to it, and a task with the alias as an inlet then reaches that
// asset's state and no other; a failed try records nothing.
func TestAddToAliasAS2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{})
	e.runningAssets(t) // the inactive asset "retired"; its run stays untouched
	dag := aliasDAG()
	e.SeedRun(t, dag, "r2", "")
	if err := e.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	wls := claimAll(t, e.Env, 4)
	export, fails, plain, reader := e.client(t, wls["export"]), e.client(t, wls["fails"]), e.client(t, wls["plain"]), e.client(t, wls["reader"])
	orders, customers := core.AssetRef{Name: "orders"}, core.AssetRef{URI: customersAsset.URI}
	ordersState, customersState := core.AssetScopeByName("orders"), core.AssetScopeByURI(customersAsset.URI)

	if err := export.AddToAlias(ctx, "dyn", orders, json.RawMessage(`{"rows": 3}`)); err != nil {
		t.Fatal(err)
	}
	status(t, export.AddToAlias(ctx, "other", orders, nil), 403,
		`task export may not add assets to alias "other": it is not one of the task's outlets (alias outlets: "dyn")`)
	status(t, plain.AddToAlias(ctx, "dyn", orders, nil), 403, `(alias outlets: none)`)
	status(t, export.AddToAlias(ctx, "dyn", core.AssetRef{Name: "nope"}, nil), 404, `no asset "nope"`)
	status(t, export.AddToAlias(ctx, "dyn", core.AssetRef{Name: "retired"}, nil), 404, `asset "retired" is inactive`)
	status(t, export.AddToAlias(ctx, "dyn", orders, json.RawMessage(`[1]`)), 400, "extra must be a JSON object")
	if err := export.AddToAlias(ctx, "dyn", core.AssetRef{Name: "orders", URI: "x"}, nil); err == nil ||
		!strings.Contains(err.Error(), "exactly one of name or uri") {
		t.Errorf("an asset named both ways: %v, want refused", err)
	}
	if err := fails.AddToAlias(ctx, "dyn", customers, nil); err != nil {
		t.Fatal(err)
	}

	// Before the producer succeeds the alias resolves to nothing.
	_, err := reader.StateGet(ctx, ordersState, "k")
	status(t, err, 403, `task reader may not access the state of asset "orders"`)

	if _, err := fails.SetState(ctx, wls["fails"].TI.ID, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	if _, err := export.SetState(ctx, wls["export"].TI.ID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	evs, err := e.Store.AssetEventList(ctx, &store.AssetEventListParams{SourceDagID: "d", SourceRunID: "r2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Name != "orders" || evs[0].SourceTaskID != "export" || evs[0].SourceKind != core.AssetSourceTask ||
		string(evs[0].Extra) != `{"rows":3}` {
		t.Fatalf("events = %+v, want one task event of orders from export with its extra (fails recorded nothing)", evs)
	}
	status(t, export.AddToAlias(ctx, "dyn", orders, nil), 403, "is not running")

	ta, err := reader.TaskAssets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ta.Inlets) != 1 || ta.Inlets[0].Name != "orders" || len(ta.Assets) != 1 {
		t.Errorf("reader's assets = %+v, want orders (what dyn resolves to) as its inlet", ta)
	}
	if err := reader.StateSet(ctx, ordersState, "k", json.RawMessage(`1`), ""); err != nil {
		t.Fatalf("reader writes the state of orders through dyn: %v", err)
	}
	if v, err := reader.StateGet(ctx, ordersState, "k"); err != nil || string(v) != "1" {
		t.Errorf("reader reads orders: %s, %v", v, err)
	}
	_, err = reader.StateGet(ctx, customersState, "k")
	status(t, err, 403, `task reader may not access the state of asset "customers": it is not one of the task's inlets or outlets (declared: "orders")`)
}
