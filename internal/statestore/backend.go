// Package statestore is the task state store of AIP-103 (SPEC A and C):
// JSON values under string keys, scoped to one task instance and shared by
// its retries. Service holds the semantics every caller shares (key and
// value rules, the size limit, retention computed at write time, cleanup)
// over a Backend, the seam where values are kept; Metastore, the default
// backend, keeps them in Weir's database. Asset state (AssetScope, SPEC B)
// shares the interface: values scoped to an asset, without retention, with
// their writer's provenance.
package statestore

import (
	"context"
	"encoding/json"
	"time"
)

// Scope is what a key belongs to: a TaskScope or an AssetScope.
type Scope interface {
	isScope()
}

// TaskScope is one task instance; every try of it shares the scope
// (SPEC TS-1). MapIndex is -1 for an unmapped task.
type TaskScope struct {
	DagID    string
	RunID    string
	TaskID   string
	MapIndex int
}

// AssetScope is one asset, named by id, name or URI (at least one).
type AssetScope struct {
	AssetID int64
	Name    string
	URI     string
}

func (TaskScope) isScope()  {}
func (AssetScope) isScope() {}

// Entry is a stored value with its metadata (SPEC TS-6).
type Entry struct {
	Key          string
	Value        json.RawMessage
	UpdatedAt    time.Time
	UpdatedByRun string     // run of the try that wrote it; "" for a user
	UpdatedByTry int        // try number that wrote it; 0 for a user
	ExpiresAt    *time.Time // nil = no expiry
	NeverExpire  bool
	// UpdatedBy is the whole provenance of an asset-state entry (SPEC AS-6).
	UpdatedBy Writer
}

// Write is one validated write as a Backend receives it: the value is
// normalized JSON within the size limit, and expiry is already computed.
type Write struct {
	Value        json.RawMessage
	UpdatedAt    time.Time
	UpdatedByRun string
	UpdatedByTry int
	ExpiresAt    *time.Time
	NeverExpire  bool
	// By is the writer; asset state records all of it (SPEC AS-6).
	By Writer
}

// Backend keeps state values (SPEC BE-1). Service validates every input
// before it reaches a Backend. Implementations return errors wrapping
// core.ErrNotFound for an absent key (Get) or a scope whose task instance
// or run does not exist (Set), and errors.ErrUnsupported for a scope they
// do not serve.
type Backend interface {
	// Get returns the entry of key.
	Get(ctx context.Context, scope Scope, key string) (*Entry, error)
	// Set writes (or overwrites) key.
	Set(ctx context.Context, scope Scope, key string, w Write) error
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, scope Scope, key string) error
	// Clear removes every key of scope; for a TaskScope with allMapIndices,
	// of every map index of the task in the run.
	Clear(ctx context.Context, scope Scope, allMapIndices bool) error
}
