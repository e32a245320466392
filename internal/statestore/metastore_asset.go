package statestore

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// resolveAsset returns the asset an AssetScope names: by id when set,
// otherwise by name, otherwise by URI. An unknown asset wraps
// core.ErrNotFound; a scope naming nothing wraps core.ErrInvalid.
func resolveAsset(ctx context.Context, st store.Store, as AssetScope) (*core.AssetModel, error) {
	var (
		a   *core.AssetModel
		err error
	)
	switch {
	case as.AssetID != 0:
		a, err = st.AssetGet(ctx, as.AssetID)
	case as.Name != "":
		a, err = st.AssetGetByName(ctx, as.Name)
	case as.URI != "":
		a, err = st.AssetGetByURI(ctx, as.URI)
	default:
		return nil, fmt.Errorf("an asset scope needs an asset id, name or uri: %w", core.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("asset %s: %w", as, err)
	}
	return a, nil
}

// assetID returns the id of the asset the scope names (no lookup when the
// scope already has it).
func (m *Metastore) assetID(ctx context.Context, as AssetScope) (int64, error) {
	if as.AssetID != 0 {
		return as.AssetID, nil
	}
	a, err := resolveAsset(ctx, m.Store, as)
	if err != nil {
		return 0, err
	}
	return a.ID, nil
}

// assetGet returns one asset-state entry or an error wrapping
// core.ErrNotFound.
func (m *Metastore) assetGet(ctx context.Context, as AssetScope, key string) (*Entry, error) {
	id, err := m.assetID(ctx, as)
	if err != nil {
		return nil, err
	}
	e, err := m.Store.AssetStateGet(ctx, id, key)
	if err != nil {
		return nil, err
	}
	return &Entry{Key: e.Key, Value: e.Value, UpdatedAt: e.UpdatedAt, UpdatedByRun: e.UpdatedBy.RunID,
		UpdatedByTry: e.UpdatedBy.TryNumber, UpdatedBy: writerOf(e.UpdatedBy)}, nil
}

// assetSet upserts one asset-state key with its writer's provenance.
func (m *Metastore) assetSet(ctx context.Context, as AssetScope, key string, w Write) error {
	id, err := m.assetID(ctx, as)
	if err != nil {
		return err
	}
	return m.Store.AssetStateSet(ctx, &store.AssetStateSetParams{AssetID: id, Key: key, Value: w.Value,
		Now: w.UpdatedAt, By: w.By.provenance()})
}

// assetDelete deletes one key, or every key of the asset when key is "".
func (m *Metastore) assetDelete(ctx context.Context, as AssetScope, key string) error {
	id, err := m.assetID(ctx, as)
	if err != nil {
		return err
	}
	_, err = m.Store.AssetStateDelete(ctx, id, key)
	return err
}
