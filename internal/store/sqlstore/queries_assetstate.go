package sqlstore

import (
	"strconv"

	"github.com/weirflow/weir/internal/core"
)

// --- asset_state_store (docs/asset-state.md; orphan sweep: docs/state-store-cleanup.md) ---

const (
	assetStateCols = `s.asset_id, a.name, a.uri, s.key, s.value, s.updated_at, s.last_updated_by_kind,
	s.last_updated_by_dag_id, s.last_updated_by_run_id, s.last_updated_by_task_id, s.last_updated_by_map_index,
	s.last_updated_by_try, s.last_updated_by_user, s.last_updated_by_watcher, a.inactive_since`
	assetStateFrom = `asset_state_store s JOIN asset a ON a.id = s.asset_id`
	// assetStateOrder is the default order (asset names are unique, so it
	// is the table's unique key too).
	assetStateOrder = `a.name, s.key`
)

const (
	// qAssetStateSet upserts one key; the asset is looked up by id, so an
	// unknown asset inserts nothing.
	qAssetStateSet = `INSERT INTO asset_state_store (asset_id, key, value, updated_at, last_updated_by_kind,
			last_updated_by_dag_id, last_updated_by_run_id, last_updated_by_task_id, last_updated_by_map_index,
			last_updated_by_try, last_updated_by_user, last_updated_by_watcher)
		SELECT id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM asset WHERE id = $1
		ON CONFLICT (asset_id, key)
		DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
			last_updated_by_kind = excluded.last_updated_by_kind,
			last_updated_by_dag_id = excluded.last_updated_by_dag_id,
			last_updated_by_run_id = excluded.last_updated_by_run_id,
			last_updated_by_task_id = excluded.last_updated_by_task_id,
			last_updated_by_map_index = excluded.last_updated_by_map_index,
			last_updated_by_try = excluded.last_updated_by_try,
			last_updated_by_user = excluded.last_updated_by_user,
			last_updated_by_watcher = excluded.last_updated_by_watcher`
	qAssetStateGet    = `SELECT ` + assetStateCols + ` FROM ` + assetStateFrom + ` WHERE s.asset_id = $1 AND s.key = $2`
	qAssetStateDelete = `DELETE FROM asset_state_store WHERE asset_id = $1 AND key = $2`
	qAssetStateClear  = `DELETE FROM asset_state_store WHERE asset_id = $1`

	// assetOrphanCond selects the assets whose state the orphan sweep
	// removes: inactive since before $1.
	assetOrphanCond    = `a.active = FALSE AND a.inactive_since IS NOT NULL AND a.inactive_since < $1`
	qAssetStateOrphans = `SELECT ` + assetStateCols + ` FROM ` + assetStateFrom + `
		WHERE ` + assetOrphanCond + ` ORDER BY ` + assetStateOrder + ` LIMIT $2`
	qAssetStateDeleteOrphans = `DELETE FROM asset_state_store WHERE asset_id IN
		(SELECT a.id FROM asset a WHERE ` + assetOrphanCond + `)`
	qAssetStateDeleteOrphansBatch = `DELETE FROM asset_state_store WHERE (asset_id, key) IN
		(SELECT s.asset_id, s.key FROM ` + assetStateFrom + `
		WHERE ` + assetOrphanCond + ` ORDER BY s.asset_id, s.key LIMIT $2)`
)

// qAssetStateClearKeepWatchers clears an asset's state but its watchers'
// keys (core.WatcherKeyPrefix): a task's clear.
var qAssetStateClearKeepWatchers = qAssetStateClear + ` AND substr(key, 1, ` + strconv.Itoa(len(core.WatcherKeyPrefix)) +
	`) <> '` + core.WatcherKeyPrefix + `'`
