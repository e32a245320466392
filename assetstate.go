package weir

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// AssetState is a Go task's access to one asset's state: JSON values under
// string keys, scoped to the asset and independent of runs, without
// retention (docs/asset-state.md). A task reaches only the assets it
// declares with Inlets or Outlets. Values are stored as plain text; do not
// put secrets in them.
type AssetState struct {
	s stateAccess
}

// AssetState returns the state of asset, one of the concrete assets this
// task declares as an inlet or outlet:
//
//	orders := weir.Asset("orders")
//	d.Go("load", fn, weir.Outlets(orders))
//	// in fn:
//	st := tc.AssetState(orders)
//
// With no argument it is the state of the task's only concrete asset; when
// the task declares none or several, every call fails with "task has N
// concrete inlets and outlets". An alias is refused: name the concrete
// asset it resolved to.
func (tc *TaskContext) AssetState(asset ...AssetRef) *AssetState {
	op := tc.op.State()
	var (
		scope *core.StateScope // nil until resolved (the shorthand)
		err   error            // a bad argument
	)
	switch {
	case len(asset) > 1:
		err = fmt.Errorf("AssetState takes at most one asset, got %d", len(asset))
	case len(asset) == 1 && asset[0].def == nil:
		err = fmt.Errorf("asset state belongs to a concrete asset, not alias %q: pass weir.Asset(NAME)", asset[0].alias)
	case len(asset) == 1:
		sc := core.AssetScopeByName(asset[0].def.Name)
		scope = &sc
	}
	taskID := tc.TaskID
	resolve := func(ctx context.Context) (core.StateScope, error) {
		if err != nil || scope != nil {
			return derefScope(scope), err
		}
		declared, lerr := op.DeclaredAssets(ctx)
		if lerr != nil {
			return core.StateScope{}, fmt.Errorf("look up the assets of task %s: %w", taskID, lerr)
		}
		a, lerr := core.ShorthandAsset(declared, "name the asset: tc.AssetState(weir.Asset(NAME))")
		if lerr != nil {
			return core.StateScope{}, lerr
		}
		sc := core.AssetScopeByName(a.Name)
		scope = &sc
		return sc, nil
	}
	return &AssetState{stateAccess{op: op, scope: resolve}}
}

// derefScope is *sc, or the zero scope.
func derefScope(sc *core.StateScope) core.StateScope {
	if sc == nil {
		return core.StateScope{}
	}
	return *sc
}

// Get returns key's value decoded into any (numbers as json.Number), or def
// when the key is absent. Use GetAssetState for a typed value.
func (s *AssetState) Get(ctx context.Context, key string, def any) (any, error) {
	return s.s.get(ctx, key, def)
}

// Set stores value (encoded as JSON; any value but nil) under key. Asset
// state has no retention: the key stays until it is deleted. Keys under
// "watcher/" are the asset's watchers' (their cursors): a task's Set or
// Delete of one is refused.
func (s *AssetState) Set(ctx context.Context, key string, value any) error {
	return s.s.set(ctx, key, value, "")
}

// Delete removes key; an absent key is not an error.
func (s *AssetState) Delete(ctx context.Context, key string) error { return s.s.delete(ctx, key) }

// Clear removes every key of the asset but its watchers' ("watcher/...").
func (s *AssetState) Clear(ctx context.Context) error { return s.s.clear(ctx, false) }

// GetAssetState returns key's value in s decoded into T, and whether the
// key was there (false with T's zero value when absent).
//
//	since, ok, err := weir.GetAssetState[int64](ctx, tc.AssetState(orders), "watermark")
func GetAssetState[T any](ctx context.Context, s *AssetState, key string) (T, bool, error) {
	return getTyped[T](ctx, &s.s, key)
}
