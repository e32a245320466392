package sqlstore

// --- event streams (docs/streaming.md) ---

const streamCols = `id, max_pending, next_index, pending, closed, error, created_at, updated_at,
	COALESCE((SELECT MIN(t.id) FROM trigger t WHERE t.stream_id = trigger_stream.id), 0)`

const streamEventCols = `stream_id, sequence_index, payload, is_last, created_at, consumed_at`

const (
	qStreamInsert = `INSERT INTO trigger_stream (id, max_pending, created_at, updated_at) VALUES ($1, $2, $3, $3)`
	// qTriggerInsertStream creates the trigger whose run produces stream $3.
	qTriggerInsertStream = `INSERT INTO trigger (type, kwargs, created_at, stream_id) VALUES ($1, $2, $3, $4)`
	qStreamGet           = `SELECT ` + streamCols + ` FROM trigger_stream WHERE id = $1`
	// qStreamLock touches stream $1, which locks its row for the rest of
	// the transaction on PostgreSQL (appends to one stream serialize), and
	// returns its head (a closed stream keeps its updated_at, from which
	// its retention counts).
	qStreamLock = `UPDATE trigger_stream SET updated_at = CASE WHEN closed THEN updated_at ELSE $2 END
		WHERE id = $1 RETURNING ` + streamCols
	// qStreamEventInsert is extended with one "($1, $n, $n+1, $n+2, $2)"
	// row per envelope ($1 = stream id, $2 = created at).
	qStreamEventInsert = `INSERT INTO trigger_event (stream_id, sequence_index, payload, is_last, created_at) VALUES `
	qStreamAdvance     = `UPDATE trigger_stream SET next_index = next_index + $2, pending = pending + $2,
		closed = $3, updated_at = $4 WHERE id = $1`
	// qRunStreamsOpen lists a run's task streams (ids with its prefix, $1
	// of length $2) still open.
	qRunStreamsOpen = `SELECT id FROM trigger_stream WHERE substr(id, 1, $2) = $1 AND NOT closed`
	// qStreamMarkLast and qStreamClose mark the last envelope is_last and
	// close the stream.
	qStreamMarkLast = `UPDATE trigger_event SET is_last = TRUE WHERE stream_id = $1 AND sequence_index = $2`
	qStreamClose    = `UPDATE trigger_stream SET closed = TRUE, error = $2, updated_at = $3 WHERE id = $1 AND NOT closed`
	qStreamEvents   = `SELECT ` + streamEventCols + ` FROM trigger_event
		WHERE stream_id = $1 AND sequence_index > $2 %s ORDER BY sequence_index LIMIT $3`
	// qStreamConsume's consumed_at is never before created_at: the clock
	// of the process that consumes (its pass's now) may lag the appending
	// one's by a moment.
	qStreamConsume = `UPDATE trigger_event SET consumed_at = CASE WHEN created_at > CAST($4 AS BIGINT) THEN created_at ELSE CAST($4 AS BIGINT) END
		WHERE stream_id = $1 AND sequence_index BETWEEN $2 AND $3 AND consumed_at IS NULL`
	qStreamConsumed = `UPDATE trigger_stream SET pending = pending - $2, updated_at = $3 WHERE id = $1`
	// qStreamEventCleanup deletes up to $2 envelopes consumed before $1.
	qStreamEventCleanup = `DELETE FROM trigger_event WHERE (stream_id, sequence_index) IN (
		SELECT stream_id, sequence_index FROM trigger_event WHERE consumed_at < $1 LIMIT $2)`
	// qStreamCleanup deletes closed streams, untouched since $1, with no
	// envelope left.
	qStreamCleanup = `DELETE FROM trigger_stream WHERE closed AND updated_at < $1 AND pending = 0
		AND NOT EXISTS (SELECT 1 FROM trigger_event e WHERE e.stream_id = trigger_stream.id)
		AND NOT EXISTS (SELECT 1 FROM trigger t WHERE t.stream_id = trigger_stream.id)`
	// qTriggerInsertProducer creates the trigger of a producer task's
	// stream $4 and returns its id.
	qTriggerInsertProducer = `INSERT INTO trigger (type, kwargs, created_at, stream_id) VALUES ($1, $2, $3, $4) RETURNING id`
	// qTriggerRetireProducer deletes trigger $1 of a stream when no try
	// waits on it (deferred on it: a try marked meanwhile keeps the id).
	qTriggerRetireProducer = `DELETE FROM trigger WHERE id = $1 AND stream_id IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM task_instance ti WHERE ti.trigger_id = trigger.id AND ti.state = 'deferred')`
	// qTriggerDeleteOtherProducers deletes the triggers of stream $1 other
	// than $2 (an earlier try's) that no try waits on.
	qTriggerDeleteOtherProducers = `DELETE FROM trigger WHERE stream_id = $1 AND id <> $2
		AND NOT EXISTS (SELECT 1 FROM task_instance ti WHERE ti.trigger_id = trigger.id)`
	// qTIPlaceholderNone is the placeholder (map_index -1) of task $2 in
	// run $1 while it is in state none.
	qTIPlaceholderNone = `SELECT id FROM task_instance WHERE dag_run_id = $1 AND task_id = $2 AND map_index = -1 AND state = ''`
)
