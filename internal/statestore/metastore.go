package statestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/store"
)

// Metastore is the default Backend: values live in Weir's database (tables
// task_state_store and asset_state_store) through store.Store. It serves
// TaskScope and AssetScope (metastore_asset.go).
type Metastore struct {
	Store store.Store
}

var _ Backend = (*Metastore)(nil)

// taskScope converts a Scope the metastore serves.
func taskScope(scope Scope) (store.TaskStateScope, error) {
	switch sc := scope.(type) {
	case TaskScope:
		return store.TaskStateScope(sc), nil
	}
	return store.TaskStateScope{}, fmt.Errorf("unknown state scope %T: %w", scope, errors.ErrUnsupported)
}

// Get returns the entry of key or an error wrapping core.ErrNotFound.
func (m *Metastore) Get(ctx context.Context, scope Scope, key string) (*Entry, error) {
	if as, ok := scope.(AssetScope); ok {
		return m.assetGet(ctx, as, key)
	}
	sc, err := taskScope(scope)
	if err != nil {
		return nil, err
	}
	e, err := m.Store.TaskStateGet(ctx, sc, key)
	if err != nil {
		return nil, err
	}
	return &Entry{Key: e.Key, Value: e.Value, UpdatedAt: e.UpdatedAt, UpdatedByRun: e.UpdatedByRun,
		UpdatedByTry: e.UpdatedByTry, ExpiresAt: e.ExpiresAt, NeverExpire: e.NeverExpire}, nil
}

// Set upserts key.
func (m *Metastore) Set(ctx context.Context, scope Scope, key string, w Write) error {
	if as, ok := scope.(AssetScope); ok {
		return m.assetSet(ctx, as, key, w)
	}
	sc, err := taskScope(scope)
	if err != nil {
		return err
	}
	return m.Store.TaskStateSet(ctx, &store.TaskStateSetParams{Scope: sc, Key: key, Value: w.Value, Now: w.UpdatedAt,
		UpdatedByRun: w.UpdatedByRun, UpdatedByTry: w.UpdatedByTry, ExpiresAt: w.ExpiresAt, NeverExpire: w.NeverExpire})
}

// Delete removes key (absent is fine).
func (m *Metastore) Delete(ctx context.Context, scope Scope, key string) error {
	if as, ok := scope.(AssetScope); ok {
		return m.assetDelete(ctx, as, key)
	}
	sc, err := taskScope(scope)
	if err != nil {
		return err
	}
	_, err = m.Store.TaskStateDelete(ctx, &store.TaskStateDeleteParams{Scope: sc, Key: key})
	return err
}

// Clear removes every key of the scope (every map index with allMapIndices).
func (m *Metastore) Clear(ctx context.Context, scope Scope, allMapIndices bool) error {
	if as, ok := scope.(AssetScope); ok {
		return m.assetDelete(ctx, as, "")
	}
	sc, err := taskScope(scope)
	if err != nil {
		return err
	}
	_, err = m.Store.TaskStateDelete(ctx, &store.TaskStateDeleteParams{Scope: sc, AllMapIndices: allMapIndices})
	return err
}
