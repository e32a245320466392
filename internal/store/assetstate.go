package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// AssetStateStore holds asset state (AIP-103, SPEC AS-1..AS-6): JSON values
// under string keys, scoped to one asset and independent of runs. Values
// have no retention: a row stays until it is deleted or cleared, until its
// asset row is deleted (foreign key, ON DELETE CASCADE), or until cleanup's
// orphan sweep removes the state of an asset inactive for long enough
// (AS-5). Values arrive validated and normalized by package statestore; the
// store checks only that they are JSON and that the writer kind is known.
type AssetStateStore interface {
	// AssetStateSet writes (or overwrites) one key with its writer.
	// ErrNotFound when the asset does not exist; ErrInvalid for a value
	// that is not JSON or an unknown writer kind.
	AssetStateSet(ctx context.Context, p *AssetStateSetParams) error
	// AssetStateGet returns one entry or ErrNotFound.
	AssetStateGet(ctx context.Context, assetID int64, key string) (*AssetStateEntry, error)
	// AssetStateList lists an asset's entries by key (assetID 0 = every
	// asset's, by asset name and key).
	AssetStateList(ctx context.Context, assetID int64) ([]AssetStateEntry, error)
	// AssetStateDelete deletes one key (key set) or every key of the asset
	// (key "") and returns how many rows went. Deleting what is absent is
	// not an error.
	AssetStateDelete(ctx context.Context, assetID int64, key string) (int64, error)
	// AssetStateOrphans lists up to limit entries (0 = all) of assets that
	// have been inactive since before inactiveBefore, by asset name and key.
	AssetStateOrphans(ctx context.Context, inactiveBefore time.Time, limit int) ([]AssetStateEntry, error)
	// AssetStateDeleteOrphans deletes up to limit entries (0 = all, in one
	// statement) of assets inactive since before inactiveBefore and returns
	// how many went; outside a transaction each call commits on its own.
	AssetStateDeleteOrphans(ctx context.Context, inactiveBefore time.Time, limit int) (int64, error)
}

// Writer kinds of asset state, kept here while callers move to the core
// names (core.StateWriterTask, ...).
const (
	StateWriterTask    = core.StateWriterTask
	StateWriterWatcher = core.StateWriterWatcher
	StateWriterAPI     = core.StateWriterAPI
	StateWriterUser    = core.StateWriterUser
)

// StateWriter is core.StateWriter, the provenance of an asset-state entry;
// the alias keeps callers compiling while they move to the core name.
type StateWriter = core.StateWriter

// AssetStateEntry is one stored key of an asset with its metadata.
type AssetStateEntry struct {
	AssetID   int64
	AssetName string
	AssetURI  string
	Key       string
	Value     json.RawMessage
	// UpdatedAt is when the value was last written, and UpdatedBy by whom.
	UpdatedAt time.Time
	UpdatedBy StateWriter
	// AssetInactiveSince is when the asset stopped being defined by any
	// active DAG; nil while it is active.
	AssetInactiveSince *time.Time
}

// AssetStateSetParams writes one key of an asset.
type AssetStateSetParams struct {
	AssetID int64
	Key     string
	Value   json.RawMessage
	Now     time.Time
	By      StateWriter
}
