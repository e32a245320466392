package sqlstore

// SQL of the asset tables (docs/assets.md), in the style of queries.go. The
// column "group" is quoted: GROUP is a keyword on both engines.

const assetCols = `id, name, uri, "group", extra, active, inactive_since, created_at, updated_at`

const (
	qAssetGet       = `SELECT ` + assetCols + ` FROM asset WHERE id = $1`
	qAssetGetByName = `SELECT ` + assetCols + ` FROM asset WHERE name = $1`
	qAssetGetByURI  = `SELECT ` + assetCols + ` FROM asset WHERE uri = $1`
	qAssetList      = `SELECT ` + assetCols + ` FROM asset%s%s%s`
	qAssetCount     = `SELECT COUNT(*) FROM asset%s`
	qAssetInsert    = `INSERT INTO asset (name, uri, "group", extra, active, created_at, updated_at)
		VALUES ($1, $2, $3, $4, TRUE, $5, $5) RETURNING id`
	qAssetUpdate = `UPDATE asset SET name = $2, uri = $3, "group" = $4, extra = $5, active = TRUE,
		inactive_since = NULL, updated_at = $6 WHERE id = $1`
	// qAssetOtherDefiner finds an active DAG other than $2 that defines asset $1.
	qAssetOtherDefiner = `SELECT da.dag_id FROM dag_asset da JOIN dag d ON d.dag_id = da.dag_id
		WHERE da.asset_id = $1 AND da.dag_id <> $2 AND d.is_active = TRUE ORDER BY da.dag_id LIMIT 1`
	// qAssetDeactivateOrphans marks inactive the assets no active DAG defines.
	qAssetDeactivateOrphans = `UPDATE asset SET active = FALSE, inactive_since = $1, updated_at = $1
		WHERE active = TRUE AND id NOT IN (
			SELECT da.asset_id FROM dag_asset da JOIN dag d ON d.dag_id = da.dag_id WHERE d.is_active = TRUE)`

	// qAssetLinks: %s is the IN list of asset ids, used three times.
	qAssetLinks = `SELECT u.asset_id, u.kind, u.dag_id, u.task_id, u.created_at, u.updated_at FROM (
		SELECT asset_id, 'producer' AS kind, dag_id, task_id, created_at, updated_at FROM task_outlet_asset WHERE asset_id IN (%[1]s)
		UNION ALL SELECT asset_id, 'reader', dag_id, task_id, created_at, updated_at FROM task_inlet_asset WHERE asset_id IN (%[1]s)
		UNION ALL SELECT asset_id, 'scheduled', dag_id, '', created_at, updated_at FROM dag_schedule_asset WHERE asset_id IN (%[1]s)
		) u JOIN dag d ON d.dag_id = u.dag_id WHERE d.is_active = TRUE ORDER BY u.asset_id, u.kind, u.dag_id, u.task_id`
	// qAssetAliasesOf: the aliases each asset of the IN list (%s) was added to.
	qAssetAliasesOf = `SELECT aa.asset_id, a.id, a.name FROM asset_alias_asset aa JOIN asset_alias a ON a.id = aa.alias_id
		WHERE aa.asset_id IN (%s) ORDER BY aa.asset_id, a.name`
	// qDagAssetRefTimes: when each of DAG $1's references was first recorded.
	qDagAssetRefTimes = `SELECT 'scheduled', asset_id, '', created_at FROM dag_schedule_asset WHERE dag_id = $1
		UNION ALL SELECT 'reader', asset_id, task_id, created_at FROM task_inlet_asset WHERE dag_id = $1
		UNION ALL SELECT 'producer', asset_id, task_id, created_at FROM task_outlet_asset WHERE dag_id = $1`

	qAssetAliasInsert = `INSERT INTO asset_alias (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`

	// A DAG's references, replaced on every sync (a reference keeps the
	// created_at it was first recorded with: qDagAssetRefTimes).
	qDagAssetDelete         = `DELETE FROM dag_asset WHERE dag_id = $1`
	qDagAssetInsert         = `INSERT INTO dag_asset (dag_id, asset_id) VALUES ($1, $2)`
	qDagScheduleAssetDelete = `DELETE FROM dag_schedule_asset WHERE dag_id = $1`
	qDagScheduleAssetInsert = `INSERT INTO dag_schedule_asset (dag_id, asset_id, created_at, updated_at) VALUES ($1, $2, $3, $4)`
	qTaskInletDelete        = `DELETE FROM task_inlet_asset WHERE dag_id = $1`
	qTaskInletInsert        = `INSERT INTO task_inlet_asset (dag_id, task_id, asset_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)`
	qTaskOutletDelete       = `DELETE FROM task_outlet_asset WHERE dag_id = $1`
	qTaskOutletInsert       = `INSERT INTO task_outlet_asset (dag_id, task_id, asset_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)`
	// qAssetQueuePrune drops queued events of assets the DAG is no longer
	// scheduled on, directly or through an alias.
	qAssetQueuePrune = `DELETE FROM asset_dag_run_queue WHERE target_dag_id = $1
		AND asset_id NOT IN (` + qScheduledAssetsOf + `)`
)

// qConsumersOfAsset selects the DAGs scheduled on asset $1, directly or
// through an alias that resolves to it.
const qConsumersOfAsset = `SELECT dag_id FROM dag_schedule_asset WHERE asset_id = $1
	UNION SELECT s.dag_id FROM dag_schedule_asset_alias s
	JOIN asset_alias_asset aa ON aa.alias_id = s.alias_id WHERE aa.asset_id = $1`

// qWidenQueueRange ends an insert into asset_dag_run_queue: an existing
// entry's event range widens to cover the new one.
const qWidenQueueRange = `ON CONFLICT (asset_id, target_dag_id) DO UPDATE SET
	first_event_id = CASE WHEN excluded.first_event_id < asset_dag_run_queue.first_event_id
		THEN excluded.first_event_id ELSE asset_dag_run_queue.first_event_id END,
	event_id = CASE WHEN excluded.event_id > asset_dag_run_queue.event_id
		THEN excluded.event_id ELSE asset_dag_run_queue.event_id END`

// qScheduledAssetsOf selects the assets DAG $1 is scheduled on: directly,
// or as what one of its scheduled aliases resolves to.
const qScheduledAssetsOf = `SELECT asset_id FROM dag_schedule_asset WHERE dag_id = $1
	UNION SELECT aa.asset_id FROM dag_schedule_asset_alias s
	JOIN asset_alias_asset aa ON aa.alias_id = s.alias_id WHERE s.dag_id = $1`

// assetEventArgs is how many arguments qAssetEventInsert takes.
const assetEventArgs = 16

const assetEventCols = `e.id, e.asset_id, a.name, a.uri, a."group", e.extra, e.partition_key, e.source_kind,
	e.source_dag_id, e.source_run_id, e.source_task_id, e.source_map_index, e.source_try_number, e.source_watcher, e.timestamp,
	e.partition_date, e.idempotency_key, e.source_user, e.source_callback_id, e.callback_depth`

const (
	qAssetEventInsert = `INSERT INTO asset_event (asset_id, extra, partition_key, source_kind, source_dag_id,
		source_run_id, source_task_id, source_map_index, source_try_number, source_watcher, timestamp,
		partition_date, idempotency_key, source_user, source_callback_id, callback_depth)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`
	// qAssetEventInsertRows inserts several events (%s: a VALUES tuple of
	// assetEventArgs placeholders an event, as for qAssetEventInsert) and returns each one's id by its
	// idempotency key.
	qAssetEventInsertRows = `INSERT INTO asset_event (asset_id, extra, partition_key, source_kind, source_dag_id,
		source_run_id, source_task_id, source_map_index, source_try_number, source_watcher, timestamp,
		partition_date, idempotency_key, source_user, source_callback_id, callback_depth)
		VALUES %s RETURNING id, idempotency_key`
	qAssetEventGet   = `SELECT ` + assetEventCols + ` FROM asset_event e JOIN asset a ON a.id = e.asset_id WHERE e.id = $1`
	qAssetEventByKey = `SELECT ` + assetEventCols + ` FROM asset_event e JOIN asset a ON a.id = e.asset_id
		WHERE e.asset_id = $1 AND e.idempotency_key = $2`
	qAssetEventList  = `SELECT ` + assetEventCols + ` FROM asset_event e JOIN asset a ON a.id = e.asset_id%s%s%s`
	qAssetEventCount = `SELECT COUNT(*) FROM asset_event e%s`
	// qAssetLastEvents: %s is the IN list of asset ids; the newest event
	// of each is found through the (asset_id, id) index.
	qAssetLastEvents = `SELECT asset_id, id, timestamp FROM asset_event WHERE id IN
		(SELECT MAX(id) FROM asset_event WHERE asset_id IN (%s) GROUP BY asset_id)`
	// qEventConsumedBy is the list filter on the events run ? consumed.
	qEventConsumedBy  = `e.id IN (SELECT event_id FROM dag_run_asset_event WHERE dag_run_id = ?)`
	qAssetEventsOfRun = `SELECT ` + assetEventCols + ` FROM dag_run_asset_event r
		JOIN asset_event e ON e.id = r.event_id JOIN asset a ON a.id = e.asset_id
		WHERE r.dag_run_id = $1 ORDER BY e.id`

	// qAssetQueueEnqueue queues events $2..$3 of asset $1 for every active,
	// coalescing DAG scheduled on the asset or on an alias that resolves to it, widening an
	// existing entry's event range.
	qAssetQueueEnqueue = `INSERT INTO asset_dag_run_queue (asset_id, target_dag_id, first_event_id, event_id, created_at)
		SELECT CAST($1 AS BIGINT), c.dag_id, CAST($2 AS BIGINT), CAST($3 AS BIGINT), CAST($4 AS BIGINT) FROM (` + qConsumersOfAsset + `) c JOIN dag d ON d.dag_id = c.dag_id
		WHERE d.is_active = TRUE AND d.asset_runs IS NULL ` + qWidenQueueRange
	// qAssetQueueReady finds the DAGs without a conditional schedule with
	// queued events whose every scheduled asset is queued and every scheduled alias has a queued event
	// of an asset it resolves to.
	qAssetQueueReady = `SELECT d.dag_id FROM dag d
		WHERE d.is_active = TRUE AND d.is_paused = FALSE AND d.asset_condition IS NULL
		AND d.dag_id IN (SELECT target_dag_id FROM asset_dag_run_queue)
		AND NOT EXISTS (SELECT 1 FROM dag_schedule_asset s WHERE s.dag_id = d.dag_id AND NOT EXISTS (
			SELECT 1 FROM asset_dag_run_queue q WHERE q.asset_id = s.asset_id AND q.target_dag_id = d.dag_id))
		AND NOT EXISTS (SELECT 1 FROM dag_schedule_asset_alias s WHERE s.dag_id = d.dag_id AND NOT EXISTS (
			SELECT 1 FROM asset_dag_run_queue q JOIN asset_alias_asset aa ON aa.asset_id = q.asset_id
			WHERE aa.alias_id = s.alias_id AND q.target_dag_id = d.dag_id))
		ORDER BY d.dag_id`
	qAssetQueueList = `SELECT q.asset_id, a.name, q.target_dag_id, q.first_event_id, q.event_id, q.created_at
		FROM asset_dag_run_queue q JOIN asset a ON a.id = q.asset_id WHERE q.target_dag_id = $1 ORDER BY a.name`
	// qAssetQueueFind: %[1]s is the WHERE clause (queueFilter) on either
	// queue's columns; a DAG's queue entry of an asset and its events in
	// the per-partition queue (a DAG that changed mode may hold both) are
	// one row.
	qAssetQueueFind = `SELECT q.asset_id, a.name, q.target_dag_id, MIN(q.first_event_id), MAX(q.event_id), MIN(q.created_at) FROM (
		SELECT asset_id, target_dag_id, first_event_id, event_id, created_at FROM asset_dag_run_queue%[1]s
		UNION ALL SELECT asset_id, target_dag_id, event_id, event_id, created_at FROM asset_event_queue%[1]s
		) q JOIN asset a ON a.id = q.asset_id GROUP BY q.asset_id, a.name, q.target_dag_id ORDER BY q.target_dag_id, a.name`
	qAssetQueueTake = `DELETE FROM asset_dag_run_queue WHERE target_dag_id = $1
		AND asset_id IN (` + qScheduledAssetsOf + `)
		RETURNING asset_id, first_event_id, event_id`
	qAssetConsume = `INSERT INTO dag_run_asset_event (dag_run_id, event_id)
		SELECT CAST($1 AS BIGINT), id FROM asset_event WHERE asset_id = $2 AND id >= $3 AND id <= $4`
)

// qAssetEventRuns: the runs each event of the IN list (%s) created.
var qAssetEventRuns = `SELECT l.event_id, ` + qualified("r", runCols) + ` FROM dag_run_asset_event l
	JOIN dag_run r ON r.id = l.dag_run_id WHERE l.event_id IN (%s) ORDER BY l.event_id, r.id`
