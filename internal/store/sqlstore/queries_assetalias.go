package sqlstore

// SQL of asset aliases resolved at run time (docs/assets.md#aliases), in the
// style of queries_assets.go.

const (
	// qAliasAssociate associates alias $1 (by name) with asset $2 at $3.
	qAliasAssociate = `INSERT INTO asset_alias_asset (alias_id, asset_id, first_associated_at, last_associated_at)
		SELECT id, CAST($2 AS BIGINT), CAST($3 AS BIGINT), CAST($3 AS BIGINT) FROM asset_alias WHERE name = $1
		ON CONFLICT (alias_id, asset_id) DO UPDATE SET last_associated_at = excluded.last_associated_at`
	qAliasAssetExists = `SELECT COUNT(*) FROM asset WHERE id = $1`
	qAliasResolve     = `SELECT a.id, a.name, a.uri, a."group", a.extra, a.active, a.inactive_since, a.created_at, a.updated_at
		FROM asset_alias al JOIN asset_alias_asset aa ON aa.alias_id = al.id JOIN asset a ON a.id = aa.asset_id
		WHERE al.name = $1 ORDER BY a.name`

	// qAliasList lists aliases with the assets each resolves to, one row
	// per (alias, asset), and one row with NULL asset columns for an alias
	// that resolves to nothing yet; qAliasGet is the same for alias $1.
	qAliasCols = `SELECT al.id, al.name, al.created_at, a.id, a.name, a.uri, a.active, aa.first_associated_at, aa.last_associated_at`
	qAliasJoin = ` al LEFT JOIN asset_alias_asset aa ON aa.alias_id = al.id LEFT JOIN asset a ON a.id = aa.asset_id`
	qAliasGet  = qAliasCols + ` FROM asset_alias` + qAliasJoin + ` WHERE al.name = $1 ORDER BY a.name`
	// qAliasPage pages the aliases in a subquery (WHERE, ORDER BY, LIMIT)
	// and joins their assets, ordered again by the same clause (the fourth
	// %s), then by asset name.
	qAliasPage  = qAliasCols + ` FROM (SELECT al.id, al.name, al.created_at FROM asset_alias al%s%s%s)` + qAliasJoin + `%s, a.name`
	qAliasCount = `SELECT COUNT(*) FROM asset_alias al%s`

	// qTILockRunning locks a running try's row without changing it, so that
	// an addition and the try's finish are serialized (0 rows: not running).
	qTILockRunning = `UPDATE task_instance SET state = state WHERE id = $1 AND state = 'running'`
	qAliasIDByName = `SELECT id FROM asset_alias WHERE name = $1`
	// qAliasEventUpsert keeps try $1's addition of asset $3 to alias $2.
	qAliasEventUpsert = `INSERT INTO task_instance_alias_event (ti_id, alias_id, asset_id, extra, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (ti_id, alias_id, asset_id) DO UPDATE SET extra = excluded.extra, created_at = excluded.created_at`
	qAliasEventList = `SELECT al.name, e.asset_id, a.name, e.extra, e.created_at FROM task_instance_alias_event e
		JOIN asset_alias al ON al.id = e.alias_id JOIN asset a ON a.id = e.asset_id
		WHERE e.ti_id = $1 ORDER BY al.name, a.name`
	qAliasEventDelete = `DELETE FROM task_instance_alias_event WHERE ti_id = $1`

	// A DAG's schedule on aliases, replaced on every sync.
	qDagScheduleAliasDelete = `DELETE FROM dag_schedule_asset_alias WHERE dag_id = $1`
	qDagScheduleAliasInsert = `INSERT INTO dag_schedule_asset_alias (dag_id, alias_id)
		SELECT CAST($1 AS TEXT), id FROM asset_alias WHERE name = $2 ON CONFLICT (dag_id, alias_id) DO NOTHING`

	// qScheduleNeeds lists what DAG $1 waits for: one row per scheduled
	// asset (alias_id 0) and one per asset each scheduled alias resolves to
	// (asset_id 0 when it resolves to none yet).
	qScheduleNeeds = `SELECT 0, asset_id FROM dag_schedule_asset WHERE dag_id = $1
		UNION ALL
		SELECT s.alias_id, COALESCE(aa.asset_id, 0) FROM dag_schedule_asset_alias s
		LEFT JOIN asset_alias_asset aa ON aa.alias_id = s.alias_id WHERE s.dag_id = $1`
)
