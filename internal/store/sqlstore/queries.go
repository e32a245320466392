package sqlstore

import "strings"

// Every SQL text of the store, one engine-neutral text each ($N placeholders,
// times as BIGINT microseconds). Texts with a %s take a generated list or
// clause (IN lists, optional filters, the dialect's claim lock).

// --- dag, dag_version, import_error ---

const dagCols = `dag_id, fileloc, is_paused, is_active, description, timetable_summary, tags,
	latest_version_id, next_run_after, last_parsed_time`

const (
	qDagGet    = `SELECT ` + dagCols + ` FROM dag WHERE dag_id = $1`
	qDagList   = `SELECT ` + dagCols + ` FROM dag%s%s%s`
	qDagCount  = `SELECT COUNT(*) FROM dag%s`
	qDagExists = `SELECT is_active, derived_by FROM dag WHERE dag_id = $1`
	qDagInsert = `INSERT INTO dag (dag_id, fileloc, is_paused, is_active, description, timetable_summary, tags, last_parsed_time, derived_by)
		VALUES ($1, $2, $3, TRUE, $4, $5, $6, $7, $8)`
	qDagUpdate = `UPDATE dag SET fileloc = $2, is_active = TRUE, description = $3, timetable_summary = $4,
		tags = $5, last_parsed_time = $6, derived_by = $7 WHERE dag_id = $1`
	qDagSetLatest     = `UPDATE dag SET latest_version_id = $2 WHERE dag_id = $1`
	qDagSetPaused     = `UPDATE dag SET is_paused = $2 WHERE dag_id = $1`
	qDagSetNextRun    = `UPDATE dag SET next_run_after = $2 WHERE dag_id = $1`
	qDagDeactivate    = `UPDATE dag SET is_active = FALSE WHERE is_active = TRUE%s`
	qDagVersionCols   = `id, dag_id, version_number, hash, spec, created_at`
	qDagVersionGet    = `SELECT ` + qDagVersionCols + ` FROM dag_version WHERE id = $1`
	qDagVersionLatest = `SELECT ` + qDagVersionCols + ` FROM dag_version WHERE dag_id = $1
		ORDER BY version_number DESC LIMIT 1`
	qDagVersionInsert = `INSERT INTO dag_version (dag_id, version_number, hash, spec, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`

	qImportErrorSet = `INSERT INTO import_error (filename, stack_trace, timestamp) VALUES ($1, $2, $3)
		ON CONFLICT (filename) DO UPDATE SET stack_trace = excluded.stack_trace, timestamp = excluded.timestamp`
	qImportErrorDelete = `DELETE FROM import_error WHERE filename = $1`
	qImportErrorCols   = `SELECT id, filename, stack_trace, timestamp FROM import_error`
	qImportErrorGet    = qImportErrorCols + ` WHERE id = $1`
	qImportErrorList   = qImportErrorCols + `%s%s%s`
	qImportErrorCount  = `SELECT COUNT(*) FROM import_error%s`

	qDagFileSet = `INSERT INTO dag_file (fileloc, parser, sum, dag_ids, dags, error, parsed_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (fileloc) DO UPDATE SET parser = excluded.parser, sum = excluded.sum, dag_ids = excluded.dag_ids,
		dags = excluded.dags, error = excluded.error, parsed_at = excluded.parsed_at`
	qDagFileList       = `SELECT ` + dagFileCols + ` FROM dag_file ORDER BY fileloc`
	qDagFileListNoDAGs = `SELECT fileloc, parser, sum, dag_ids, '' AS dags, error, parsed_at FROM dag_file ORDER BY fileloc`
	qDagFileGet        = `SELECT ` + dagFileCols + ` FROM dag_file WHERE fileloc = $1`
	dagFileCols        = `fileloc, parser, sum, dag_ids, dags, error, parsed_at` // scanDagFile's order
	qDagFileDelete     = `DELETE FROM dag_file WHERE fileloc = $1`

	qDagWarningSet = `INSERT INTO dag_warning (dag_id, warning_type, message, timestamp) VALUES ($1, $2, $3, $4)
		ON CONFLICT (dag_id, warning_type) DO UPDATE SET message = excluded.message, timestamp = excluded.timestamp`
	qDagWarningDelete = `DELETE FROM dag_warning WHERE dag_id = $1 AND warning_type = $2`
	qDagWarningList   = `SELECT dag_id, warning_type, message, timestamp FROM dag_warning%s%s%s`
	qDagWarningCount  = `SELECT COUNT(*) FROM dag_warning%s`
)

// --- dag_run ---

const runCols = `id, dag_id, run_id, run_type, state, logical_date, data_interval_start, data_interval_end,
	conf, dag_version_id, queued_at, start_date, end_date, partition_key, backfill_id, test_job_id`

const (
	qRunInsert = `INSERT INTO dag_run (dag_id, run_id, run_type, state, logical_date, data_interval_start,
		data_interval_end, conf, dag_version_id, queued_at, start_date, partition_key, backfill_id, test_job_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`
	qRunGet     = `SELECT ` + runCols + ` FROM dag_run WHERE dag_id = $1 AND run_id = $2`
	qRunGetByID = `SELECT ` + runCols + ` FROM dag_run WHERE id = $1`
	// qRunGetPausedWithTasks: %s is the IN list of task ids. Each row is an
	// instance (tiCols), then its run (runCols) and whether the DAG is
	// paused, or NULLs past map index 0: a run's conf is not repeated for
	// each of a mapped task's instances. (Every task has an instance of map
	// index -1 or 0: its placeholder or the first of its expansion.)
	qRunGetPausedWithTasks = `SELECT t.*, r.*
		FROM (SELECT ` + tiCols + ` FROM task_instance WHERE dag_run_id = $1 AND task_id IN (%s)) t
		LEFT JOIN (SELECT ` + runCols + `, COALESCE((SELECT dag.is_paused FROM dag WHERE dag.dag_id = dag_run.dag_id), TRUE)
			FROM dag_run WHERE id = $1) r ON t.map_index <= 0
		ORDER BY t.task_id, t.map_index`
	qRunList = `SELECT ` + runCols + ` FROM dag_run%s%s%s`
	// qRunRecent: %s is the IN list of dag ids; the last placeholder is
	// the runs per DAG.
	qRunRecent = `SELECT ` + runCols + ` FROM (SELECT ` + runCols + `,
		ROW_NUMBER() OVER (PARTITION BY dag_id ORDER BY id DESC) AS recent
		FROM dag_run WHERE dag_id IN (%s)) r WHERE recent <= %s ORDER BY dag_id, id`
	// qTIStateCounts: %s is the IN list of dag_run ids, then the condition
	// on task ids ("" for all).
	qTIStateCounts = `SELECT dag_run_id, task_id, state, COUNT(*), MAX(map_index), MIN(start_date), MAX(end_date)
		FROM task_instance WHERE dag_run_id IN (%s)%s GROUP BY dag_run_id, task_id, state
		ORDER BY dag_run_id, task_id, state`
	qTITotals = `SELECT queue, state, COUNT(*) FROM task_instance GROUP BY queue, state ORDER BY queue, state`
	qRunCount = `SELECT COUNT(*) FROM dag_run%s`
	// qRunSetState: a run leaving an end (cleared, a task marked) is no
	// longer a test's to end (test_job_id, ADR 0041).
	// qRunSetState: a run sent back to queued (a clear) starts anew, as
	// Airflow's: no start date until the scheduler starts it, queued now.
	qRunSetState = `UPDATE dag_run SET state = $2,
		start_date = CASE WHEN $4 THEN COALESCE(start_date, $3) WHEN $2 = 'queued' THEN NULL ELSE start_date END,
		queued_at = CASE WHEN $2 = 'queued' THEN $3 ELSE queued_at END,
		end_date = CASE WHEN $5 THEN $3 ELSE NULL END,
		test_job_id = CASE WHEN state IN ('success', 'failed') AND NOT $5 THEN NULL ELSE test_job_id END
		WHERE id = $1%s`
	qRunExists          = `SELECT 1 FROM dag_run WHERE id = $1`
	qRunEndTest         = `UPDATE dag_run SET test_job_id = NULL WHERE id = $1 AND test_job_id IS NOT NULL`
	qRunLatestScheduled = `SELECT ` + runCols + ` FROM dag_run
		WHERE dag_id = $1 AND run_type IN ('scheduled', 'backfill') AND logical_date IS NOT NULL
		ORDER BY logical_date DESC, id DESC LIMIT 1`
	qRunPreviousSuccess = `SELECT ` + runCols + ` FROM dag_run
		WHERE dag_id = $1 AND state = 'success' AND logical_date < $2
		ORDER BY logical_date DESC, id DESC LIMIT 1`
	qRunCountByState = `SELECT state, COUNT(*) FROM dag_run WHERE dag_id = $1 GROUP BY state`
)

// --- task_instance, task_instance_history ---

// tiCols is the column list of task_instance and task_instance_history, in
// scanTI's order (history adds none, so archiving is INSERT ... SELECT).
// archivedState is the state a try is recorded with in history.
const archivedState = `CASE WHEN state IN ('up_for_retry', 'running', 'queued', 'restarting', 'deferred') THEN 'failed' ELSE state END`

const tiCols = `id, dag_run_id, dag_id, run_id, task_id, map_index, try_number, max_tries, state, queue,
	pool, pool_slots, priority_weight, operator, hostname, worker_id, pid, queued_at, start_date, end_date,
	last_heartbeat, next_retry_at, dag_version_id, map_args,
	trigger_id, trigger_timeout, next_method, next_kwargs, next_event, interruptions, stopped_at`

// tiInsertCols are the columns set when a task instance is created; one
// VALUES tuple has tiInsertArgs placeholders.
const (
	tiInsertCols = `id, dag_run_id, dag_id, run_id, task_id, map_index, try_number, max_tries, state, queue,
	pool, pool_slots, priority_weight, operator, queued_at, dag_version_id, map_args, updated_at`
	tiInsertArgs = 18
)

const (
	qTIInsert   = `INSERT INTO task_instance (` + tiInsertCols + `) VALUES %s`
	qTIGet      = `SELECT ` + tiCols + ` FROM task_instance WHERE id = $1`
	qTIGetByKey = `SELECT ` + tiCols + ` FROM task_instance
		WHERE dag_run_id = (SELECT id FROM dag_run WHERE dag_id = $1 AND run_id = $2) AND task_id = $3 AND map_index = $4`
	qTIList   = `SELECT ` + tiCols + ` FROM task_instance%s%s%s`
	qTICount  = `SELECT COUNT(*) FROM task_instance%s`
	qTIStates = `SELECT id, state FROM task_instance%s`
	// qTISetState's stopped_at records when a running try was ended by
	// someone other than its worker (whose end is qTIFinish): a mark.
	qTISetState = `UPDATE task_instance SET state = $1, updated_at = $2, next_retry_at = $3,
		stopped_at = CASE WHEN state = 'running' AND $5 THEN $2 ELSE stopped_at END,
		queued_at = CASE WHEN $4 THEN $2 ELSE queued_at END,
		worker_id = CASE WHEN $4 THEN NULL ELSE worker_id END,
		claimed_at = CASE WHEN $4 THEN NULL ELSE claimed_at END,
		end_date = CASE WHEN $5 THEN $2 ELSE end_date END
		WHERE id IN (%s)%s`
	qTIPlaceholder = `SELECT id FROM task_instance WHERE dag_run_id = $1 AND task_id = $2 AND map_index = -1`
	qTIMappedCount = `SELECT COUNT(*) FROM task_instance WHERE dag_run_id = $1 AND task_id = $2 AND map_index >= 0`
	qTISkip        = `UPDATE task_instance SET state = 'skipped', start_date = $2, end_date = $2, updated_at = $2
		WHERE id = $1`
	qTIDelete = `DELETE FROM task_instance WHERE id = $1`
	qTINewTry = `UPDATE task_instance SET id = $2, try_number = try_number + 1, max_tries = max_tries + $3,
		state = $4, hostname = '', worker_id = NULL, claimed_at = NULL, pid = 0, queued_at = NULL,
		start_date = NULL, end_date = NULL, last_heartbeat = NULL,
		next_retry_at = CASE WHEN $6 THEN next_retry_at ELSE NULL END, updated_at = $5,
		trigger_id = NULL, trigger_timeout = NULL, next_method = '', next_kwargs = NULL, next_event = NULL,
		failed_over = FALSE, stopped_at = NULL WHERE id = $1`
	qTIHistory = `SELECT ` + tiCols + ` FROM task_instance_history
		WHERE dag_id = $1 AND run_id = $2 AND task_id = $3 AND map_index = $4 ORDER BY try_number`

	// qTIClaim marks queued, unclaimed rows as claimed in one statement. The
	// candidates are picked once in a materialized CTE (an IN subquery with
	// LIMIT may be re-evaluated by PostgreSQL and exceed the limit); the
	// outer conditions re-check each row after a concurrent update. The
	// rows are joined by id (UPDATE ... FROM): with "id IN (SELECT ...)"
	// SQLite scanned every queued row through the state index instead.
	// The first %s is the reclaim condition (qTIReclaim or nothing), the
	// second the queues, the third the run it is confined to (qTIOfRun,
	// else qNotOfTests), the fourth the order's reclaim key, the fifth the
	// dialect's row lock, the last the start (qTIClaimStart or nothing).
	qTIClaim  = qTIPicked + "\n" + qTIClaimUpdate
	qTIPicked = `WITH picked(pick_id) AS MATERIALIZED (
			SELECT id FROM task_instance
			WHERE state = 'queued' AND (worker_id IS NULL%s) AND queue IN (%s)%s
			ORDER BY %spriority_weight DESC, queued_at, id LIMIT $3 %s)`
	// qTIOfRun confines a claim to one run (%s: its placeholder).
	qTIOfRun = ` AND dag_run_id = %s`
	// qNotOfTests keeps an unconfined claim off the runs of `weir dags
	// test` processes, whose own workers run their tries and the callbacks
	// they fire, until the test ends its run (DagRunEndTest: ADR 0041, ADR
	// 0042; the partial index dag_run_test finds them).
	qNotOfTests    = ` AND dag_run_id NOT IN (` + qTestRunIDs + `)`
	qTestRunIDs    = `SELECT id FROM dag_run WHERE test_job_id IS NOT NULL`
	qTIClaimUpdate = `UPDATE task_instance SET worker_id = $1, claimed_at = $2, updated_at = $2%s
		FROM picked WHERE id = pick_id AND state = 'queued' AND (worker_id IS NULL OR worker_id = $1)
		RETURNING ` + tiCols
	// qTIClaimWithRuns is qTIClaim returning each claimed try's run after
	// it (Dialect.ClaimJoinsRuns).
	qTIClaimWithRuns = qTIPicked + `, claimed AS (` + qTIClaimUpdate + `)
		SELECT claimed.*, r.* FROM claimed JOIN (SELECT ` + runCols + ` FROM dag_run) r ON r.id = claimed.dag_run_id`
	// qTIReclaim adds the worker's own unstarted claims, except those it
	// holds (%s: ` AND id NOT IN (their ids)`, or nothing).
	qTIReclaim = ` OR (worker_id = $1%s)`
	// qTIStartedUnheld finds the running tries a worker process started
	// and does not hold (%s: ` AND id NOT IN (their ids)`, or nothing, then
	// qTIOfRun when the claim is confined to a run).
	qTIStartedUnheld = `SELECT ` + tiCols + ` FROM task_instance
		WHERE state = 'running' AND worker_id = $1 AND hostname = $2 AND pid = $3%s
		ORDER BY id LIMIT $4`
	// qTIStart keeps the start_date of a try resuming after a deferral (its
	// duration includes the wait, as in Airflow).
	qTIStart = `UPDATE task_instance SET ` + tiStartSet + `, updated_at = $2
		WHERE id = $1 AND state = 'queued' AND worker_id = $3
		RETURNING ` + tiCols
	// qTIClaimStart starts what qTIClaim claims ($4, $5: hostname, pid).
	qTIClaimStart = `, ` + tiStartSet
	// tiStartSet moves a try to running for a process: $2 the time, $4
	// the hostname, $5 the pid. A try never starts before it was queued: a
	// claim reads its time before its statement waits for the queueing's
	// commit, which may have read a later one.
	tiStartSet = `state = 'running', hostname = $4, pid = $5,
		start_date = CASE WHEN next_method <> '' OR next_event IS NOT NULL THEN COALESCE(start_date, $2)
			WHEN queued_at > $2 THEN queued_at ELSE $2 END,
		last_heartbeat = $2, end_date = NULL`
	qTIHeartbeat = `UPDATE task_instance SET last_heartbeat = $2 WHERE id = $1 AND state = 'running'`
	// qTIFinish's $7 is heartbeatSeen's: 0 for any end, else the only
	// last_heartbeat a failover of the dead-worker check may find; $8 is
	// what max_tries grows by (1 for a refunded try).
	qTIFinish = `UPDATE task_instance SET state = $2, end_date = $3, updated_at = $3, next_retry_at = $4,
		failed_over = $6, max_tries = max_tries + $8, interruptions = interruptions + $8 WHERE id = $1 AND state = $5 AND (state = 'running' OR failed_over)
		AND (CAST($7 AS BIGINT) = 0 OR COALESCE(last_heartbeat, 1) <= CAST($7 AS BIGINT))`
	qTITakeBack = `UPDATE task_instance SET state = 'running', last_heartbeat = $2, updated_at = $2,
		end_date = NULL, next_retry_at = NULL, failed_over = FALSE
		WHERE id = $1 AND state = 'up_for_retry' AND failed_over`
	qTIStale = `SELECT ` + tiCols + ` FROM task_instance
		WHERE (state = 'running' AND COALESCE(last_heartbeat, start_date, updated_at) < $1)
		   OR (state = 'queued' AND worker_id IS NOT NULL AND claimed_at < $1)
		ORDER BY id`
	qTIActive = `SELECT pool, dag_id, dag_run_id, queue, SUM(pool_slots), COUNT(*),
		SUM(CASE WHEN state = 'queued' AND worker_id IS NULL THEN 1 ELSE 0 END) FROM task_instance
		WHERE state IN ('queued', 'running') GROUP BY pool, dag_id, dag_run_id, queue`
	// qPoolsInUse is qTIActive's rows after the pools' (slots as the sum,
	// the description as the DAG id, -1 as the run).
	qPoolsInUse = `SELECT pool, description, -1, '', slots, 0, 0 FROM slot_pool
		UNION ALL ` + qTIActive
	// qQueueingReads returns the rows of a count (qTIActive or
	// qPoolsInUse, the first %s) and those of a page of task instances
	// (the second), each with NULLs in the other's columns; the page's
	// in its own order (the last %s), the count's before or after them.
	qQueueingReads = `SELECT a.*, t.* FROM (%s) a FULL JOIN (%s) t ON 1 = 0 ORDER BY %s`
)

// qTIArchive copies the current try to history. A try that started but
// did not finish (up_for_retry, or running/queued when cleared) is recorded
// as failed, as Airflow records it; a try that never started keeps its
// state. A running try (a clear ends it) is recorded stopped at $2: its
// worker may ship its last log lines for store.LateLogGrace.
var qTIArchive = `INSERT INTO task_instance_history (` + tiCols + `, claimed_at, updated_at)
		SELECT ` + strings.NewReplacer("state,", archivedState+" AS state,",
	"stopped_at", "CASE WHEN state = 'running' THEN $2 ELSE stopped_at END").Replace(tiCols) + `, claimed_at, updated_at
		FROM task_instance WHERE id = $1`

// qTIArchived is an archived try by its id.
var qTIArchived = `SELECT ` + tiCols + ` FROM task_instance_history WHERE id = $1`

// qTIArchiveFrom and qTINewTryFrom are qTIArchive and qTINewTry for a try
// that must still be in the state named by the last parameter.
var (
	qTIArchiveFrom = qTIArchive + ` AND state = $3`
	qTINewTryFrom  = qTINewTry + ` AND state = $7`
)

// --- xcom ---

const xcomCols = `dag_id, run_id, task_id, map_index, key, value, timestamp`

const (
	qXComSet = `INSERT INTO xcom (dag_run_id, dag_id, run_id, task_id, map_index, key, value, timestamp)
		SELECT id, dag_id, run_id, $3, $4, $5, $6, $7 FROM dag_run WHERE dag_id = $1 AND run_id = $2
		ON CONFLICT (dag_run_id, task_id, map_index, key)
		DO UPDATE SET value = excluded.value, timestamp = excluded.timestamp`
	qXComRun = `dag_run_id = (SELECT id FROM dag_run WHERE dag_id = $1 AND run_id = $2)`
	qXComGet = `SELECT ` + xcomCols + ` FROM xcom WHERE ` + qXComRun + `
		AND task_id = $3 AND map_index = $4 AND key = $5`
	// qXComListRun is the list filters' run condition (? for the builder).
	qXComListRun = `dag_run_id = (SELECT id FROM dag_run WHERE dag_id = ? AND run_id = ?)`
	qXComList    = `SELECT ` + xcomCols + ` FROM xcom%s%s%s`
	qXComCount   = `SELECT COUNT(*) FROM xcom%s`
	qXComClear   = `DELETE FROM xcom WHERE ` + qXComRun + ` AND task_id = $3 AND map_index = $4`
	qXComDelete  = qXComClear + ` AND key = $5`
)

// --- users, tokens ---

const (
	userCols    = `username, password_hash, role, created_at, session_epoch`
	qUserUpsert = `INSERT INTO weir_user (` + userCols + `) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash, role = excluded.role,
		session_epoch = CASE WHEN excluded.session_epoch > weir_user.session_epoch THEN excluded.session_epoch
			ELSE weir_user.session_epoch END`
	qUserGet          = `SELECT ` + userCols + ` FROM weir_user WHERE username = $1`
	qUserList         = `SELECT ` + userCols + ` FROM weir_user%s%s%s`
	qUserCount        = `SELECT COUNT(*) FROM weir_user%s`
	qUserCountLocked  = `SELECT COUNT(*) FROM (SELECT username FROM weir_user%s %s) locked`
	tokenCols         = `id, name, username, hash, created_at, expires_at`
	qTokenInsert      = `INSERT INTO api_token (` + tokenCols + `) VALUES ($1, $2, $3, $4, $5, $6)`
	qTokenGetByHash   = `SELECT ` + tokenCols + ` FROM api_token WHERE hash = $1`
	qTokenList        = `SELECT ` + tokenCols + ` FROM api_token ORDER BY created_at, id`
	qTokenDelete      = `DELETE FROM api_token WHERE id = $1`
	qTokenDeleteNamed = `DELETE FROM api_token WHERE username = $1 AND name = $2`
	qUserDelete       = `DELETE FROM weir_user WHERE username = $1`

	qRevocationUpsert = `INSERT INTO credential_revocation (scope, subject, revoked_before, revoked_by) VALUES ($1, $2, $3, $4)
		ON CONFLICT (scope, subject) DO UPDATE SET revoked_before = excluded.revoked_before, revoked_by = excluded.revoked_by`
	qRevocationGet = `SELECT revoked_before, revoked_by FROM credential_revocation WHERE scope = $1 AND subject = $2`

	qSessionEnd = `INSERT INTO ended_session (session_id, expires_at) VALUES ($1, $2)
		ON CONFLICT (session_id) DO NOTHING`
	qSessionPrune = `DELETE FROM ended_session WHERE expires_at < $1`
	qSessionEnded = `SELECT 1 FROM ended_session WHERE session_id = $1`
)

// --- pools, connections, jobs, audit log ---

const (
	qPoolUpsert = `INSERT INTO slot_pool (pool, slots, description) VALUES ($1, $2, $3)
		ON CONFLICT (pool) DO UPDATE SET slots = excluded.slots, description = excluded.description`
	qPoolCols  = `SELECT p.pool, p.slots, p.description, `
	qPoolList  = qPoolCols + `0, 0, 0, 0 FROM slot_pool p%s%s%s`
	qPoolCount = `SELECT COUNT(*) FROM slot_pool p%s`
	// qPoolListOccupied adds the slots of each listed pool's running,
	// queued, scheduled and deferred task instances (computed for the
	// page's pools only).
	qPoolListOccupied = qPoolCols + qPoolSlotsIn + `'running'), ` + qPoolSlotsIn + `'queued'), ` + qPoolSlotsIn + `'scheduled'), ` +
		qPoolSlotsIn + `'deferred') FROM slot_pool p%s%s%s`
	qPoolSlotsIn = `(SELECT COALESCE(SUM(t.pool_slots), 0) FROM task_instance t WHERE t.pool = p.pool AND t.state = `
	qPoolDelete  = `DELETE FROM slot_pool WHERE pool = $1`

	qConnUpsert = `INSERT INTO connection (conn_id, uri) VALUES ($1, $2)
		ON CONFLICT (conn_id) DO UPDATE SET uri = excluded.uri`
	qConnGet    = `SELECT conn_id, uri FROM connection WHERE conn_id = $1`
	qConnList   = `SELECT conn_id, uri FROM connection%s%s%s`
	qConnCount  = `SELECT COUNT(*) FROM connection%s`
	qConnDelete = `DELETE FROM connection WHERE conn_id = $1`

	qJobUpsert = `INSERT INTO job (id, role, hostname, pid, started_at, heartbeat, worker_id, heartbeat_interval, up_since, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (id) DO UPDATE SET role = excluded.role, hostname = excluded.hostname, pid = excluded.pid,
		heartbeat = excluded.heartbeat, worker_id = excluded.worker_id, heartbeat_interval = excluded.heartbeat_interval,
		up_since = excluded.up_since, version = excluded.version`
	qJobList = `SELECT id, role, hostname, pid, started_at, heartbeat, worker_id, heartbeat_interval, up_since, version
		FROM job ORDER BY role, id`
	// qWorkerLastBeat is the latest row of worker $1's processes.
	qWorkerLastBeat = `SELECT id, role, hostname, pid, started_at, heartbeat, worker_id, heartbeat_interval, up_since, version
		FROM job WHERE role = 'worker' AND worker_id = $1 ORDER BY heartbeat DESC, id LIMIT 1`
	// qJobPrune deletes the rows of processes silent since before $1.
	qJobPrune = `DELETE FROM job WHERE heartbeat < $1`
	// qJobDeleteOfProcess deletes the rows of process $2 on host $1.
	qJobDeleteOfProcess = `DELETE FROM job WHERE hostname = $1 AND pid = $2`
	// qTIWorkerBeatRunning and qTIWorkerBeatClaimed refresh the running
	// tries and the unstarted claims a live worker holds (%s: their ids)
	// with its heartbeat. A row another transaction holds (an end, a
	// failover, a start: %s is Dialect.ClaimLock) is skipped rather than
	// waited for: the beat never waits on a try's end, and two of them
	// locking a worker's rows in different orders cannot deadlock (a
	// deadlock lost the beat, and the live worker's try was failed over).
	qTIWorkerBeatRunning = `UPDATE task_instance SET last_heartbeat = $2 WHERE id IN (SELECT id FROM task_instance
		WHERE worker_id = $1 AND state = 'running' AND id IN (%s) %s)`
	qTIWorkerBeatClaimed = `UPDATE task_instance SET claimed_at = $2 WHERE id IN (SELECT id FROM task_instance
		WHERE worker_id = $1 AND state = 'queued' AND id IN (%s) %s)`
	// qTIStaleOfWorker is qTIStale for one worker's tries.
	qTIStaleOfWorker = `SELECT ` + tiCols + ` FROM task_instance
		WHERE worker_id = $2 AND ((state = 'running' AND COALESCE(last_heartbeat, start_date, updated_at) < $1)
		   OR (state = 'queued' AND claimed_at < $1))
		ORDER BY id`

	qAuditInsert = `INSERT INTO audit_log (at, username, action, target, detail) VALUES ($1, $2, $3, $4, $5)
		RETURNING id`
	qAuditList  = `SELECT id, at, username, action, target, detail FROM audit_log%s%s%s`
	qAuditCount = `SELECT COUNT(*) FROM audit_log%s`
)
