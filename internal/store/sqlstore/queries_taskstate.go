package sqlstore

// --- task_state_store (docs/task-state.md; cleanup: docs/state-store-cleanup.md) ---

const (
	taskStateCols = `dag_id, run_id, task_id, map_index, key, value, updated_at, updated_by_run, updated_by_try,
	expires_at, never_expire`
	taskStateFrom = `task_state_store`
	// taskStateOrder is the default order, and the tie-break that makes
	// every order stable (the unique key).
	taskStateOrder = `dag_id, run_id, task_id, map_index, key`
	// taskStateScopeCond selects one scope: $1..$4 = dag, run, task, map index.
	taskStateScopeCond = `dag_id = $1 AND run_id = $2 AND task_id = $3 AND map_index = $4`
)

const (
	// qTaskStateSet upserts one key; the run is looked up by (dag_id,
	// run_id), so an unknown run inserts nothing.
	qTaskStateSet = `INSERT INTO task_state_store (dag_run_id, dag_id, run_id, task_id, map_index, key, value,
			updated_at, updated_by_run, updated_by_try, expires_at, never_expire)
		SELECT id, dag_id, run_id, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM dag_run WHERE dag_id = $1 AND run_id = $2
		ON CONFLICT (dag_run_id, task_id, map_index, key)
		DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
			updated_by_run = excluded.updated_by_run, updated_by_try = excluded.updated_by_try,
			expires_at = excluded.expires_at, never_expire = excluded.never_expire`
	// qStateTry reads what the Execution API checks of a try's token.
	qStateTry                    = `SELECT dag_id, run_id, task_id, map_index, try_number, state, dag_version_id FROM task_instance WHERE id = $1`
	qTaskStateGet                = `SELECT ` + taskStateCols + ` FROM task_state_store WHERE ` + taskStateScopeCond + ` AND key = $5`
	qTaskStateDelete             = `DELETE FROM task_state_store WHERE ` + taskStateScopeCond + ` AND key = $5`
	qTaskStateClear              = `DELETE FROM task_state_store WHERE ` + taskStateScopeCond
	qTaskStateClearAllMapIndices = `DELETE FROM task_state_store WHERE dag_id = $1 AND run_id = $2 AND task_id = $3`
	// qTaskStateClearTI clears the state of the task instance whose current
	// try is $1 (clear_on_success, inside the finishing transaction).
	qTaskStateClearTI = `DELETE FROM task_state_store WHERE (dag_run_id, task_id, map_index) IN
		(SELECT dag_run_id, task_id, map_index FROM task_instance WHERE id = $1)`

	// taskStateExpiredCond selects rows cleanup deletes: a non-null
	// expires_at in the past; never-expire rows are excluded twice over
	// (their expires_at is NULL).
	taskStateExpiredCond = `expires_at IS NOT NULL AND expires_at < $1 AND never_expire = FALSE`
	qTaskStateExpired    = `SELECT ` + taskStateCols + ` FROM task_state_store WHERE ` + taskStateExpiredCond + `
		ORDER BY ` + taskStateOrder + ` LIMIT $2`
	qTaskStateDeleteExpired      = `DELETE FROM task_state_store WHERE ` + taskStateExpiredCond
	qTaskStateDeleteExpiredBatch = `DELETE FROM task_state_store WHERE id IN
		(SELECT id FROM task_state_store WHERE ` + taskStateExpiredCond + ` ORDER BY expires_at LIMIT $2)`
)
