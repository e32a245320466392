package sqlstore

// --- asset_watcher (docs/watchers.md) ---

// watcherRunning is the condition on asset_watcher w of a watcher that
// runs: its DAG and its asset are active.
const watcherRunning = `EXISTS (SELECT 1 FROM dag d WHERE d.dag_id = w.dag_id AND d.is_active)
	AND EXISTS (SELECT 1 FROM asset ra WHERE ra.id = w.asset_id AND ra.active)`

const watcherCols = `w.asset_id, a.name, a.uri, a.extra, w.name, w.dag_id, w.trigger_type, w.trigger_kwargs,
	w.trigger_id, t.triggerer_id, c.value, c.updated_at, w.last_poll_at, w.last_poll_ms, w.last_event_at,
	w.last_event_id, w.events, w.last_error, w.last_error_at, w.errors_in_row, w.created_at`

const (
	qWatcherList = `SELECT ` + watcherCols + ` FROM asset_watcher w
		JOIN asset a ON a.id = w.asset_id
		LEFT JOIN trigger t ON t.id = w.trigger_id
		LEFT JOIN asset_state_store c ON c.asset_id = w.asset_id AND c.key = 'watcher/' || w.name || '/cursor'
		%s ORDER BY a.name, w.name`
	qWatcherGet = `SELECT dag_id, trigger_type, trigger_kwargs, trigger_id FROM asset_watcher
		WHERE asset_id = $1 AND name = $2`
	qWatcherOfDag  = `SELECT asset_id, name, trigger_id FROM asset_watcher WHERE dag_id = $1`
	qWatcherDelete = `DELETE FROM asset_watcher WHERE asset_id = $1 AND name = $2`
	qWatcherInsert = `INSERT INTO asset_watcher (asset_id, name, dag_id, trigger_type, trigger_kwargs, trigger_id,
		created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	qWatcherUpdate = `UPDATE asset_watcher SET dag_id = $3, trigger_type = $4, trigger_kwargs = $5, trigger_id = $6
		WHERE asset_id = $1 AND name = $2`
	qDagActive = `SELECT is_active FROM dag WHERE dag_id = $1`
	// qWatcherTriggerFind finds a watcher trigger row with this type and
	// kwargs, to share.
	qWatcherTriggerFind = `SELECT t.id FROM trigger t WHERE t.type = $1 AND t.kwargs = $2
		AND EXISTS (SELECT 1 FROM asset_watcher w WHERE w.trigger_id = t.id) ORDER BY t.id LIMIT 1`
	qWatcherUnattached = `SELECT w.asset_id, w.name, w.trigger_type, w.trigger_kwargs FROM asset_watcher w
		WHERE w.trigger_id IS NULL AND ` + watcherRunning + ` ORDER BY w.asset_id, w.name`
	qWatcherAttach = `UPDATE asset_watcher SET trigger_id = $3 WHERE asset_id = $1 AND name = $2`
	// qWatcherOnTrigger checks that watcher ($1, $2) is run by trigger $3.
	qWatcherOnTrigger = `SELECT 1 FROM asset_watcher WHERE asset_id = $1 AND name = $2 AND trigger_id = $3`
	qCursorVersion    = `SELECT updated_at FROM asset_state_store WHERE asset_id = $1 AND key = $2`
	qWatcherEvents    = `UPDATE asset_watcher SET last_event_at = $3, last_event_id = $4, events = events + $5
		WHERE asset_id = $1 AND name = $2`
	qWatcherPolled = `UPDATE asset_watcher SET last_poll_at = $2, last_poll_ms = $3, errors_in_row = $4,
		last_error = CASE WHEN $5 = '' THEN last_error ELSE $5 END,
		last_error_at = CASE WHEN $5 = '' THEN last_error_at ELSE $6 END
		WHERE trigger_id = $1`
)
