package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// AssetAliasStore holds what asset aliases resolved to and a running try's
// additions to its alias outlets (docs/assets.md#aliases, docs/requirements.md#as-2).
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
	// AssetAliasList returns a page of the recorded aliases
	// (store.AssetAliasOrder, by name by default), each with the assets it
	// resolves to (by name) and when it was first and last associated with
	// each; AssetAliasCount counts the aliases.
	AssetAliasList(ctx context.Context, p *AssetAliasListParams) ([]AssetAlias, error)
	AssetAliasCount(ctx context.Context, p *AssetAliasListParams) (int, error)
	// AssetAliasGet returns one alias as AssetAliasList does; ErrNotFound
	// when no DAG declared it and nothing was added to it.
	AssetAliasGet(ctx context.Context, name string) (*AssetAlias, error)
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

// AssetAliasListParams pages AssetAliasList.
type AssetAliasListParams struct {
	Page
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

// AssetAlias is a recorded alias with the assets it resolves to.
type AssetAlias struct {
	ID        int64          `json:"id"`
	Name      string         `json:"name"`
	Group     string         `json:"group"`      // Airflow's default, core.DefaultAssetGroup: Weir's aliases have none
	CreatedAt time.Time      `json:"created_at"` // when a DAG or an association first recorded it
	Assets    []AliasedAsset `json:"assets"`     // by name; empty until a task adds to the alias
}

// AliasedAsset is an asset an alias resolves to, with when the alias was
// first and last associated with it (each success of a try that added it).
type AliasedAsset struct {
	ID                int64     `json:"id"`
	Name              string    `json:"name"`
	URI               string    `json:"uri"`
	Active            bool      `json:"active"` // an inactive asset stays associated but is not reachable
	FirstAssociatedAt time.Time `json:"first_associated_at"`
	LastAssociatedAt  time.Time `json:"last_associated_at"`
}
