package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// assetStateTable is asset state's table, asset_state_store: one row per
// (asset, key), without retention, recording its whole writer. Reads join
// the asset for its name, uri and inactive_since (the orphan sweep's
// clock). Scopes reach the store resolved to an asset id.
var assetStateTable = stateTable{
	cols: assetStateCols, from: assetStateFrom,
	order: orderSpec{order: store.AssetStateOrder, def: assetStateOrder, key: []string{"a.name", "s.key"},
		cols: map[string]string{"asset_name": "a.name", "key": "s.key", "updated_at": "s.updated_at"}},
	get:   qAssetStateGet,
	stale: qAssetStateOrphans, deleteStale: qAssetStateDeleteOrphans, deleteStaleBatch: qAssetStateDeleteOrphansBatch,
	scopeArgs: assetScopeArgs,
	set: func(p *store.StateSetParams) (string, []any, error) {
		args, err := assetScopeArgs(p.Scope)
		if err != nil {
			return "", nil, err
		}
		if p.ExpiresAt != nil || p.NeverExpire {
			return "", nil, invalidf("asset state has no retention")
		}
		by := p.By
		return qAssetStateSet, append(args, p.Key, string(p.Value), micros(p.Now), by.Kind, by.DagID, by.RunID,
			by.TaskID, by.MapIndex, by.TryNumber, by.User, by.Watcher), nil
	},
	del: func(p *store.StateDeleteParams) (string, []any, error) {
		args, err := assetScopeArgs(p.Scope)
		switch {
		case err != nil:
			return "", nil, err
		case p.Key != "":
			return qAssetStateDelete, append(args, p.Key), nil
		case p.KeepWatchers:
			return qAssetStateClearKeepWatchers, args, nil
		}
		return qAssetStateClear, args, nil
	},
	filter: func(b *builder, p *store.StateListParams) error {
		if p.AssetID != 0 {
			b.where("s.asset_id = ?", p.AssetID)
		}
		return nil
	},
	scan: scanAssetState,
}

// assetScopeArgs returns the asset id; a scope not resolved to one is
// refused.
func assetScopeArgs(sc core.StateScope) ([]any, error) {
	if sc.AssetID == 0 {
		return nil, fmt.Errorf("asset state scope %s is not resolved to an asset id: %w", sc, core.ErrInvalid)
	}
	return []any{sc.AssetID}, nil
}

// scanAssetState reads one row in assetStateCols order.
func scanAssetState(r scanner) (core.StateEntry, error) {
	var (
		e        = core.StateEntry{Scope: core.StateScope{Kind: core.StateAsset, MapIndex: core.NoMapIndex}}
		sc       = &e.Scope
		b        = &e.UpdatedBy
		value    string
		updated  int64
		inactive sql.NullInt64
	)
	err := r.Scan(&sc.AssetID, &sc.AssetName, &sc.AssetURI, &e.Key, &value, &updated, &b.Kind, &b.DagID, &b.RunID,
		&b.TaskID, &b.MapIndex, &b.TryNumber, &b.User, &b.Watcher, &inactive)
	e.Value = json.RawMessage(value)
	e.UpdatedAt = fromMicros(updated)
	e.AssetInactiveSince = ptrMicros(inactive)
	return e, err
}
