package statestore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
)

// A try reaches its own task state, and the state of the active assets its
// task declares (reads of others only with allow_undeclared_asset_reads);
// an unknown or inactive asset is ErrUnknownAsset (docs/asset-state.md).
func TestAuthorizeTry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := newService(t, statestore.Config{})
	relaxed := statestore.New(st, nil, statestore.Config{AllowUndeclaredAssetReads: true})
	defineAssets(t, st, orders, customers, core.Asset{Name: "gone", URI: "s3://lake/gone"})
	defineAssets(t, st, orders, customers) // gone is inactive
	ti, err := st.TaskInstanceGetByKey(ctx, "d", "r1", "t", -1)
	if err != nil {
		t.Fatal(err)
	}
	try, err := st.StateTry(ctx, ti.ID)
	if err != nil {
		t.Fatal(err)
	}
	dag := &core.DAG{DagID: "d", Assets: []core.Asset{orders}, Tasks: []core.Task{{TaskID: "t", Outlets: []core.AssetRef{{Name: "orders"}}}}}
	dagOf := func(context.Context, int64) (*core.DAG, error) { return dag, nil }
	wantBy := core.StateWriter{Kind: core.StateWriterTask, DagID: "d", RunID: "r1", TaskID: "t", MapIndex: -1, TryNumber: ti.TryNumber}

	scope, by, err := svc.AuthorizeTry(ctx, try, core.StateScope{Kind: core.StateTask}, true, dagOf)
	if err != nil || scope != sc || by != wantBy {
		t.Errorf("task state: %+v by %+v, %v; want its own scope by its try", scope, by, err)
	}
	scope, _, err = svc.AuthorizeTry(ctx, try, core.AssetScopeByURI(orders.URI), true, dagOf)
	if err != nil || scope.AssetID == 0 || scope.AssetName != "orders" || scope.AssetURI != orders.URI {
		t.Errorf("declared asset by uri: %+v, %v; want orders resolved", scope, err)
	}
	for _, c := range []struct {
		name  string
		svc   *statestore.Service
		want  core.StateScope
		write bool
		err   error
		msg   string
	}{
		{"undeclared write", relaxed, core.AssetScopeByName("customers"), true, core.ErrForbidden, `(declared: "orders")`},
		{"undeclared read", svc, core.AssetScopeByName("customers"), false, core.ErrForbidden, `may not access the state of asset "customers"`},
		{"unknown asset", svc, core.AssetScopeByName("nope"), false, statestore.ErrUnknownAsset, `no asset "nope"`},
		{"inactive asset", svc, core.AssetScopeByName("gone"), false, statestore.ErrUnknownAsset, `asset "gone" is inactive`},
	} {
		_, _, err := c.svc.AuthorizeTry(ctx, try, c.want, c.write, dagOf)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v saying %s", c.name, err, c.err, c.msg)
		}
	}
	if _, _, err := relaxed.AuthorizeTry(ctx, try, core.AssetScopeByName("customers"), false, dagOf); err != nil {
		t.Errorf("undeclared read with allow_undeclared_asset_reads: %v", err)
	}
	if _, _, err := svc.AuthorizeTry(ctx, try, core.AssetScopeByName("nope"), false, dagOf); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("an unknown asset does not wrap core.ErrNotFound: %v", err)
	}
}
