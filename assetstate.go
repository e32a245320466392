package weir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
)

// The worker's Execution API client serves a Go task's asset state.
var _ operator.AssetState = (*execclient.Client)(nil)

// AssetState is a Go task's access to one asset's state: JSON values under
// string keys, scoped to the asset and independent of runs, without
// retention (docs/asset-state.md). A task reaches only the assets it
// declares with Inlets or Outlets. Values are stored as plain text; do not
// put secrets in them.
type AssetState struct {
	op     operator.AssetState
	taskID string
	ref    *core.AssetRef // nil until resolved (the shorthand)
	err    error          // a bad argument to TaskContext.AssetState
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
// concrete inlets and outlets" (SPEC AS-2). An alias is refused: name the
// concrete asset it resolved to.
func (tc *TaskContext) AssetState(asset ...AssetRef) *AssetState {
	s := &AssetState{op: tc.op.AssetState(), taskID: tc.TaskID}
	switch {
	case len(asset) > 1:
		s.err = fmt.Errorf("AssetState takes at most one asset, got %d", len(asset))
	case len(asset) == 1 && asset[0].def == nil:
		s.err = fmt.Errorf("asset state belongs to a concrete asset, not alias %q: pass weir.Asset(NAME)", asset[0].alias)
	case len(asset) == 1:
		s.ref = &core.AssetRef{Name: asset[0].def.Name}
	}
	return s
}

// asset returns the asset the accessor names, asking the API which assets
// the task declares for the shorthand.
func (s *AssetState) asset(ctx context.Context) (core.AssetRef, error) {
	if s.err != nil {
		return core.AssetRef{}, s.err
	}
	if s.ref != nil {
		return *s.ref, nil
	}
	declared, err := s.op.DeclaredAssets(ctx)
	if err != nil {
		return core.AssetRef{}, fmt.Errorf("look up the assets of task %s: %w", s.taskID, err)
	}
	a, err := core.ShorthandAsset(declared, "name the asset: tc.AssetState(weir.Asset(NAME))")
	if err != nil {
		return core.AssetRef{}, err
	}
	s.ref = &core.AssetRef{Name: a.Name}
	return *s.ref, nil
}

// raw returns key's stored JSON and whether it was there; an unknown or
// inactive asset is an error, not an absent key.
func (s *AssetState) raw(ctx context.Context, key string) (json.RawMessage, bool, error) {
	ref, err := s.asset(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("get asset state %q: %w", key, err)
	}
	raw, err := s.op.AssetStateGet(ctx, ref, key)
	if errors.Is(err, ErrNotFound) && !execclient.IsUnknownAsset(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get asset state %q of asset %s: %w", key, ref, err)
	}
	return raw, true, nil
}

// Get returns key's value decoded into any (numbers as json.Number), or def
// when the key is absent. Use GetAssetState for a typed value.
func (s *AssetState) Get(ctx context.Context, key string, def any) (any, error) {
	raw, ok, err := s.raw(ctx, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return def, nil
	}
	v, err := decodeStateValue(raw)
	if err != nil {
		return nil, fmt.Errorf("decode asset state %q: %w", key, err)
	}
	return v, nil
}

// Set stores value (encoded as JSON; any value but nil) under key. Asset
// state has no retention: the key stays until it is deleted.
func (s *AssetState) Set(ctx context.Context, key string, value any) error {
	ref, err := s.asset(ctx)
	if err == nil {
		var b []byte
		if b, err = encodeStateValue(value); err == nil {
			err = s.op.AssetStateSet(ctx, ref, key, b)
		}
	}
	if err != nil {
		return fmt.Errorf("set asset state %q from task %s: %w", key, s.taskID, err)
	}
	return nil
}

// Delete removes key; an absent key is not an error.
func (s *AssetState) Delete(ctx context.Context, key string) error {
	ref, err := s.asset(ctx)
	if err == nil {
		err = s.op.AssetStateDelete(ctx, ref, key)
	}
	if err != nil {
		return fmt.Errorf("delete asset state %q from task %s: %w", key, s.taskID, err)
	}
	return nil
}

// Clear removes every key of the asset.
func (s *AssetState) Clear(ctx context.Context) error {
	ref, err := s.asset(ctx)
	if err == nil {
		err = s.op.AssetStateClear(ctx, ref)
	}
	if err != nil {
		return fmt.Errorf("clear asset state from task %s: %w", s.taskID, err)
	}
	return nil
}

// GetAssetState returns key's value in s decoded into T, and whether the
// key was there (false with T's zero value when absent).
//
//	since, ok, err := weir.GetAssetState[int64](ctx, tc.AssetState(orders), "watermark")
func GetAssetState[T any](ctx context.Context, s *AssetState, key string) (T, bool, error) {
	var out T
	raw, ok, err := s.raw(ctx, key)
	if err != nil || !ok {
		return out, false, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, true, fmt.Errorf("asset state %q: cannot decode %s into %T: %w", key, raw, out, err)
	}
	return out, true, nil
}
