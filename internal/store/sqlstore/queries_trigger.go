package sqlstore

// --- trigger, deferred task instances ---

const triggerCols = `id, type, kwargs, created_at, triggerer_id, stream_id`

const (
	qTriggerInsert = `INSERT INTO trigger (type, kwargs, created_at) VALUES ($1, $2, $3) RETURNING id`
	// qTIDefer moves one try to deferred on trigger $2; the worker's claim
	// ends (the slot is free) but the try does not: start_date is kept (or
	// set, for a task that starts from its trigger).
	qTIDefer = `UPDATE task_instance SET state = 'deferred', trigger_id = $2, trigger_timeout = $3,
		next_method = $4, next_kwargs = $5, next_event = NULL, worker_id = NULL, claimed_at = NULL, pid = 0,
		last_heartbeat = NULL, start_date = COALESCE(start_date, $6), updated_at = $6
		WHERE id = $1 AND state IN (%s)`
	// qTIResume moves deferred tries back to scheduled with the event (or,
	// for a failure, next_method __fail__ and its message).
	qTIResume = `UPDATE task_instance SET state = 'scheduled', trigger_id = NULL, trigger_timeout = NULL,
		next_event = $1, next_method = CASE WHEN $2 THEN $3 ELSE next_method END,
		next_kwargs = CASE WHEN $2 THEN $4 ELSE next_kwargs END, updated_at = $5
		WHERE state = %s AND %s RETURNING id`
	qTIDeferredTimedOut = `SELECT ` + tiCols + ` FROM task_instance
		WHERE state = 'deferred' AND trigger_timeout < $1 ORDER BY trigger_timeout LIMIT $2`
	qTriggerGet   = `SELECT ` + triggerCols + ` FROM trigger WHERE id = $1`
	qTriggerList  = `SELECT ` + triggerCols + ` FROM trigger%s%s%s`
	qTriggerCount = `SELECT COUNT(*) FROM trigger%s`
	// qTriggerClaim assigns up to $3 triggers that are unassigned or whose
	// triggerer's job heartbeat is older than $2 to triggerer $1 (picked
	// once, locked with the dialect's claim lock so concurrent claimers
	// take disjoint rows); the first %s confines it to one run's triggers
	// (qTriggerOfRun, else qTriggerNotOfTests), the second is the lock.
	qTriggerClaim = `WITH picked AS MATERIALIZED (
			SELECT id FROM trigger
			WHERE (triggerer_id IS NULL OR triggerer_id NOT IN (
				SELECT id FROM job WHERE role = 'triggerer' AND heartbeat >= $2))%s
			ORDER BY id LIMIT $3 %s)
		UPDATE trigger SET triggerer_id = $1 WHERE id IN (SELECT id FROM picked) RETURNING ` + triggerCols
	// qTriggerOfRun confines a claim to the triggers one run's tries wait
	// on ($4: the run) and those filling its tasks' streams ($5: their ids'
	// prefix and %, core.RunStreamPrefix): a producer's trigger goes on
	// after its try resumed and left it.
	qTriggerOfRun = ` AND (id IN (SELECT trigger_id FROM task_instance WHERE dag_run_id = $4) OR stream_id LIKE $5)`
	// qTriggerNotOfTests keeps an unconfined claim off the triggers of the
	// runs of `weir dags test` processes (qNotOfTests): those their tries
	// wait on and those filling their tasks' streams (core.RunStreamPrefix).
	qTriggerNotOfTests = ` AND id NOT IN (SELECT trigger_id FROM task_instance
			WHERE trigger_id IS NOT NULL AND dag_run_id IN (` + qTestRunIDs + `))
		AND NOT EXISTS (SELECT 1 FROM dag_run r WHERE r.test_job_id IS NOT NULL AND stream_id LIKE 'run-' || r.id || ':%')`
	// qTriggerHold locks trigger $1 for the transaction when triggerer $2
	// still owns it (the fence every event commits behind).
	qTriggerHold = `UPDATE trigger SET triggerer_id = triggerer_id WHERE id = $1 AND triggerer_id = $2`
	// qTriggerDeleteUnused deletes triggers no try waits on, no running
	// watcher uses and whose stream, if any, is closed.
	qTriggerDeleteUnused = `DELETE FROM trigger WHERE %s NOT EXISTS (
		SELECT 1 FROM task_instance WHERE task_instance.trigger_id = trigger.id)
		AND NOT EXISTS (SELECT 1 FROM asset_watcher w WHERE w.trigger_id = trigger.id AND ` + watcherRunning + `)
		AND NOT EXISTS (SELECT 1 FROM trigger_stream s WHERE s.id = trigger.stream_id AND NOT s.closed)`
)
