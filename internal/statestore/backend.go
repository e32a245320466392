// Package statestore is the state store of AIP-103 (docs/task-state.md,
// docs/asset-state.md): JSON values under string keys, in scopes of several
// kinds (core.StateScope: a task instance, shared by its tries; an asset,
// independent of runs). Service holds every rule callers share, for every
// kind at once: key and value rules, the size limit, retention computed at
// write time, which assets a try may reach, audited admin edits and
// cleanup. Values are kept by a Backend; Metastore, the default, keeps
// them in Weir's database through one store.StateStore port.
package statestore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Write is one validated write as a Backend receives it: the value is
// normalized JSON within the size limit, and expiry is already computed.
type Write struct {
	Value       json.RawMessage
	UpdatedAt   time.Time
	By          core.StateWriter
	ExpiresAt   *time.Time
	NeverExpire bool
	// Object is the object reference Value holds (a write through the
	// worker-side backend, docs/state-backends.md): its reservation is
	// consumed with the write, or the write is refused.
	Object string
}

// Backend keeps state values (docs/state-backends.md). Service validates
// every input, and resolves an asset scope to its id, before it reaches a
// Backend. Implementations return errors wrapping core.ErrNotFound for an
// absent key (Get) or a scope whose run or asset does not exist (Set).
type Backend interface {
	// Get returns the entry of key.
	Get(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error)
	// Set writes (or overwrites) key.
	Set(ctx context.Context, scope core.StateScope, key string, w Write) error
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, scope core.StateScope, key string) error
	// Clear removes the keys of scope that c says.
	Clear(ctx context.Context, scope core.StateScope, c Clearing) error
}

// Clearing says which keys a Clear removes: every key of the scope but,
// with KeepWatchers, an asset's watchers' keys; of a task scope with
// AllMapIndices, those of every map index of the task in the run.
type Clearing struct {
	AllMapIndices bool
	KeepWatchers  bool
}

// Metastore is the default Backend: values live in Weir's database, one
// table per kind, through the store's StateStore port.
type Metastore struct {
	Store store.StateStore
}

var _ Backend = (*Metastore)(nil)

// Get returns the entry of key or an error wrapping core.ErrNotFound.
func (m *Metastore) Get(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error) {
	return m.Store.StateGet(ctx, scope, key)
}

// Set upserts key.
func (m *Metastore) Set(ctx context.Context, scope core.StateScope, key string, w Write) error {
	return m.Store.StateSet(ctx, &store.StateSetParams{Scope: scope, Key: key, Value: w.Value, Now: w.UpdatedAt,
		By: w.By, ExpiresAt: w.ExpiresAt, NeverExpire: w.NeverExpire, Object: w.Object})
}

// Delete removes key (absent is fine).
func (m *Metastore) Delete(ctx context.Context, scope core.StateScope, key string) error {
	_, err := m.Store.StateDelete(ctx, &store.StateDeleteParams{Scope: scope, Key: key})
	return err
}

// Clear removes the keys of the scope that c says.
func (m *Metastore) Clear(ctx context.Context, scope core.StateScope, c Clearing) error {
	_, err := m.Store.StateDelete(ctx, &store.StateDeleteParams{Scope: scope, AllMapIndices: c.AllMapIndices, KeepWatchers: c.KeepWatchers})
	return err
}
