package execapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

var (
	ordersAsset    = core.Asset{Name: "orders", URI: "s3://lake/orders"}
	customersAsset = core.Asset{Name: "customers", URI: "s3://lake/customers"}
	retiredAsset   = core.Asset{Name: "retired", URI: "s3://lake/retired"}
)

// assetDAG: "load" writes orders (an outlet) and reads customers (an
// inlet); "other" declares nothing; "both" declares orders twice.
func assetDAG() core.DAG {
	return core.DAG{DagID: "d", Assets: []core.Asset{ordersAsset, customersAsset}, Tasks: []core.Task{
		{TaskID: "load", Operator: "noop", Inlets: []core.AssetRef{{Name: "customers"}}, Outlets: []core.AssetRef{{URI: ordersAsset.URI}}},
		{TaskID: "other", Operator: "noop"},
		{TaskID: "both", Operator: "noop", Inlets: []core.AssetRef{{Name: "orders"}}, Outlets: []core.AssetRef{{Name: "orders"}, {Alias: "dyn"}}},
	}}
}

// runningAssets seeds assetDAG (and an inactive asset "retired"), starts its
// three tasks and returns a client per task.
func (e *stateEnv) runningAssets(t *testing.T) map[string]*execclient.Client {
	t.Helper()
	ctx := context.Background()
	old := core.DAG{DagID: "gone", Assets: []core.Asset{retiredAsset}, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
	if _, _, err := e.Store.DagSync(ctx, &store.DagSyncParams{Spec: old, Hash: "gone", Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &old, Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	old.Assets = nil
	if err := e.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &old, Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	dag := assetDAG()
	e.SeedRun(t, dag, "r1", "")
	if err := e.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*execclient.Client{}
	for task, wl := range claimAll(t, e.Env, 3) {
		out[task] = e.client(t, wl)
	}
	return out
}

// assetRows lists every asset-state row as "asset/key=value".
func (e *stateEnv) assetRows(t *testing.T) []string {
	t.Helper()
	all, err := e.Store.StateList(context.Background(), &store.StateListParams{Kind: core.StateAsset})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range all {
		out = append(out, r.Scope.AssetName+"/"+r.Key+"="+string(r.Value))
	}
	return out
}

// docs/requirements.md#as-1, #as-3, #as-6 over HTTP, by name and by uri (Airflow's paths):
// values round-trip, the writer's provenance is recorded, a missing key is
// 404 naming it, delete is a no-op when absent, clear empties the asset.
func TestAssetStateRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{})
	load := e.runningAssets(t)["load"]
	byName, byURI := core.AssetScopeByName("orders"), core.AssetScopeByURI(ordersAsset.URI)

	if err := load.StateSet(ctx, byName, "watermark", json.RawMessage(`{"id": 41, "at": "2026-05-01"}`), ""); err != nil {
		t.Fatal(err)
	}
	got, err := load.StateEntry(ctx, byURI, "watermark")
	if err != nil {
		t.Fatal(err)
	}
	want := core.StateWriter{Kind: "task", DagID: "d", RunID: "r1", TaskID: "load", MapIndex: -1, TryNumber: 1}
	if string(got.Value) != `{"id":41,"at":"2026-05-01"}` || got.UpdatedBy != want || got.Scope.AssetName != "orders" ||
		got.Scope.AssetURI != ordersAsset.URI || !got.UpdatedAt.Equal(e.Clock.Now()) || got.ExpiresAt != nil {
		t.Errorf("entry = %+v, want the value written by d/r1/load try 1", got)
	}
	// The key in the path, as for task state; Airflow's ?key= form answers
	// the same entry.
	inPath := get(t, e.url+"/store/asset/by-name/value/watermark?name=orders", load.Token())
	airflow := get(t, e.url+"/store/asset/by-name/value?name=orders&key=watermark", load.Token())
	if inPath.body != airflow.body {
		t.Errorf("the two forms answer differently:\n%s\n%s", inPath.body, airflow.body)
	}
	var raw struct {
		Scope map[string]any `json:"scope"`
		By    map[string]any `json:"last_updated_by"`
	}
	if err := json.Unmarshal([]byte(inPath.body), &raw); err != nil || raw.Scope["kind"] != "asset" ||
		raw.Scope["asset_name"] != "orders" || raw.By["kind"] != "task" || raw.By["task_id"] != "load" {
		t.Errorf("GET body %s: want scope and last_updated_by members", inPath.body)
	}
	_, err = load.StateGet(ctx, byName, "absent")
	status(t, err, 404, `no asset state key "absent" for asset "orders"`)
	if execclient.IsUnknownAsset(err) {
		t.Error("an absent key is reported as an unknown asset")
	}
	if err := load.StateDelete(ctx, byURI, "absent"); err != nil {
		t.Errorf("delete of an absent key: %v", err)
	}
	if err := load.StateSet(ctx, byURI, "n", json.RawMessage(`7`), ""); err != nil {
		t.Fatal(err)
	}
	if got := e.assetRows(t); len(got) != 2 {
		t.Fatalf("rows = %v", got)
	}
	if err := load.StateDelete(ctx, byName, "n"); err != nil {
		t.Fatal(err)
	}
	if got := e.assetRows(t); len(got) != 1 || got[0] != `orders/watermark={"id":41,"at":"2026-05-01"}` {
		t.Errorf("after delete: %v", got)
	}
	if err := load.StateClear(ctx, byURI, false); err != nil {
		t.Fatal(err)
	}
	if got := e.assetRows(t); len(got) != 0 {
		t.Errorf("after clear: %v", got)
	}
}

// docs/requirements.md#as-2: the task's declared concrete assets, inlets and outlets once
// each; aliases are not concrete.
func TestTaskAssets(t *testing.T) {
	t.Parallel()
	e := newStateEnv(t, statestore.Config{})
	cs := e.runningAssets(t)
	for task, want := range map[string][]string{"load": {"customers", "orders"}, "other": {}, "both": {"orders"}} {
		got, err := cs[task].TaskAssets(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, a := range got.Assets {
			names = append(names, a.Name)
		}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("assets of %s = %v, want %v", task, names, want)
		}
	}
	other := cs["other"]
	_, err := other.WithToken(other.Token(), cs["load"].Identity).TaskAssets(context.Background())
	status(t, err, 403, "token subject does not match")
}

// docs/requirements.md#as-4, #sec-2, #sec-3: a task reaches only the assets it declares (403
// naming the asset and what it declares, nothing changes); an unknown or
// inactive asset is 404; bad values are 400/413; a finished try's token is
// refused. allow_undeclared_asset_reads opens reads, never writes.
func TestAssetStateRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{MaxValueBytes: 32})
	cs := e.runningAssets(t)
	load, other := cs["load"], cs["other"]
	if err := load.StateSet(ctx, core.AssetScopeByName("orders"), "k", json.RawMessage(`"original"`), ""); err != nil {
		t.Fatal(err)
	}
	unchanged := func(what string) {
		t.Helper()
		if got := e.assetRows(t); len(got) != 1 || got[0] != `orders/k="original"` {
			t.Errorf("%s changed the table: %v", what, got)
		}
	}
	orders := core.AssetScopeByName("orders")
	status(t, other.StateSet(ctx, orders, "k", json.RawMessage(`1`), ""), 403,
		`task other may not access the state of asset "orders": it is not one of the task's inlets or outlets (declared: none)`)
	_, err := other.StateGet(ctx, core.AssetScopeByURI(ordersAsset.URI), "k")
	status(t, err, 403, `asset "orders"`)
	status(t, other.StateDelete(ctx, orders, "k"), 403, `asset "orders"`)
	status(t, other.StateClear(ctx, orders, false), 403, `asset "orders"`)
	unchanged("an undeclared task")

	_, err = load.StateGet(ctx, core.AssetScopeByName("nope"), "k")
	status(t, err, 404, `no asset "nope"`)
	if ae := (*execclient.Error)(nil); errors.As(err, &ae) && ae.Problem.Detail != `no asset "nope"` { // named once (issue 12)
		t.Errorf("unknown asset's detail %q, want only `no asset \"nope\"`", ae.Problem.Detail)
	}
	if !execclient.IsUnknownAsset(err) {
		t.Errorf("unknown asset: %v is not reported as one", err)
	}
	status(t, load.StateSet(ctx, core.AssetScopeByName("retired"), "k", json.RawMessage(`1`), ""), 404, `asset "retired" is inactive`)
	if resp := get(t, e.url+"/store/asset/by-name/value?key=k", load.Token()); resp.status != 400 || !strings.Contains(resp.body, `query parameter \"name\" is required`) {
		t.Errorf("no name: %d %s", resp.status, resp.body)
	}

	for body, detail := range map[string]string{
		`{"value": NaN}`:                               "NaN or Infinity",
		`{"value": null}`:                              "null cannot be stored",
		`{"value": 1, "retention": "6h"}`:              "asset state has no retention",
		`{"value": "` + strings.Repeat("x", 40) + `"}`: "42 bytes, over the limit of 32 bytes ([state_store] max_value_bytes)",
	} {
		code := 400
		if strings.Contains(detail, "max_value_bytes") {
			code = 413
		}
		resp := put(t, e.url+"/store/asset/by-name/value?name=orders&key=k", load.Token(), body)
		if resp.status != code || !strings.Contains(resp.body, detail) {
			t.Errorf("PUT %s: %d %s; want %d with %q", body, resp.status, resp.body, code, detail)
		}
		unchanged("PUT " + body)
	}

	if _, err := load.SetState(ctx, load.Identity.TIID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	status(t, load.StateSet(ctx, orders, "k", json.RawMessage(`2`), ""), 403, "not running")
	_, err = load.StateGet(ctx, orders, "k")
	status(t, err, 403, "not running")
	unchanged("a finished try's token")
}

// An asset's watchers' keys (their cursors) are read-only to tasks: a task
// that moved a cursor made its watcher fire again what it had fired. A set
// or delete is 403 saying how an admin moves a cursor; a clear removes the
// task's keys and keeps the watchers'.
func TestAssetStateWatcherKeysAreReadOnlyToTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{})
	load := e.runningAssets(t)["load"]
	orders := core.AssetScopeByName("orders")
	scope, err := statestore.New(e.Store, e.Clock, statestore.Config{}).Resolve(ctx, orders)
	if err != nil {
		t.Fatal(err)
	}
	cursor := core.WatcherCursorKey("landing")
	if err := e.Store.StateSet(ctx, &store.StateSetParams{Scope: scope, Key: cursor, Value: json.RawMessage(`{"modified":"2026-05-01T00:00:00Z"}`),
		Now: e.Clock.Now(), By: core.WatcherWriter("landing")}); err != nil {
		t.Fatal(err)
	}
	if got, err := load.StateGet(ctx, orders, cursor); err != nil || string(got) != `{"modified":"2026-05-01T00:00:00Z"}` {
		t.Errorf("a task reading its inlet's watcher cursor: %s, %v", got, err)
	}
	status(t, load.StateSet(ctx, orders, cursor, json.RawMessage(`{"modified":"2020-01-01T00:00:00Z"}`), ""), 403,
		`state key "watcher/landing/cursor" of asset "orders" is its watchers'`)
	status(t, load.StateSet(ctx, orders, "watcher/mine", json.RawMessage(`1`), ""), 403, "weir assets watchers set-cursor")
	status(t, load.StateDelete(ctx, orders, cursor), 403, "a task may read it, not write it")
	if err := load.StateSet(ctx, orders, "k", json.RawMessage(`1`), ""); err != nil {
		t.Fatal(err)
	}
	if err := load.StateClear(ctx, orders, false); err != nil {
		t.Fatal(err)
	}
	if got := e.assetRows(t); len(got) != 1 || got[0] != `orders/watcher/landing/cursor={"modified":"2026-05-01T00:00:00Z"}` {
		t.Errorf("after the task's set, delete and clear: %v; want the cursor alone, unchanged", got)
	}
}

// docs/requirements.md#as-4's relaxing switch: with allow_undeclared_asset_reads any
// running task reads any asset's state; writes still need the declaration.
func TestAllowUndeclaredAssetReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{AllowUndeclaredAssetReads: true})
	cs := e.runningAssets(t)
	orders := core.AssetScopeByName("orders")
	if err := cs["load"].StateSet(ctx, orders, "k", json.RawMessage(`1`), ""); err != nil {
		t.Fatal(err)
	}
	if v, err := cs["other"].StateGet(ctx, orders, "k"); err != nil || string(v) != "1" {
		t.Errorf("undeclared read with the switch on: %s %v", v, err)
	}
	status(t, cs["other"].StateSet(ctx, orders, "k", json.RawMessage(`2`), ""), 403, `asset "orders"`)
}

// get sends a raw GET with a bearer token.
func get(t *testing.T, url, token string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b)}
}
