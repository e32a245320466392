package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// AssetAliasStore holds what asset aliases resolved to and a running try's
// additions to its alias outlets (docs/assets.md#aliases, SPEC AS-2).
type AssetAliasStore interface {
	// AssetAliasAssociate records, idempotently, that the alias resolved to
	// the asset at Now (the alias is created when no DAG recorded it yet).
	// Call it in the transaction of the asset's event so that consumers of
	// the alias are queued for that event. ErrNotFound when the asset does
	// not exist.
	AssetAliasAssociate(ctx context.Context, p *AssetAliasAssociateParams) error
	// AssetAliasResolve returns the assets the alias is associated with, by
	// name; none when the alias is unknown or has resolved to nothing yet.
	AssetAliasResolve(ctx context.Context, alias string) ([]core.AssetModel, error)
	// AssetAliasEventAdd keeps a running try's addition of an asset to an
	// alias until the try finishes (adding the same asset to the same alias
	// again replaces the extra). ErrConflict when the try is not running,
	// ErrNotFound when the alias or the asset does not exist, ErrInvalid when
	// extra is not a JSON object.
	AssetAliasEventAdd(ctx context.Context, p *AssetAliasEventParams) error
	// AssetAliasEventList returns a try's pending additions, by alias and
	// asset name.
	AssetAliasEventList(ctx context.Context, tiID string) ([]AssetAliasEvent, error)
}

// AssetAliasAssociateParams associates an alias with an asset.
type AssetAliasAssociateParams struct {
	Alias   string
	AssetID int64
	Now     time.Time
}

// AssetAliasEventParams is a running try's addition of an asset to an alias.
type AssetAliasEventParams struct {
	TaskInstanceID string
	Alias          string
	AssetID        int64
	Extra          json.RawMessage // a JSON object; nil = {}
	Now            time.Time
}

// AssetAliasEvent is a pending addition of a try: when the try succeeds it
// becomes an event of the asset, and the alias is associated with the asset.
type AssetAliasEvent struct {
	Alias     string          `json:"alias"`
	AssetID   int64           `json:"asset_id"`
	AssetName string          `json:"asset_name"`
	Extra     json.RawMessage `json:"extra"`
	CreatedAt time.Time       `json:"created_at"`
}
