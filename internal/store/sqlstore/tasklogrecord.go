package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/weirflow/weir/internal/store"
)

const (
	taskLogCols = `l.log_key, l.dag_id, l.run_id, l.task_id, l.map_index, l.try_number, l.kind, l.location,
		l.size, l.attempts, l.error, l.created_at, l.stored_at, l.pruned_at`
	qTaskLogRecord = `INSERT INTO task_log (log_key, dag_id, run_id, task_id, map_index, try_number, kind, location, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (log_key) DO UPDATE SET kind = excluded.kind, location = excluded.location,
			size = 0, attempts = 0, error = '', lease_until = 0, stored_at = NULL, pruned_at = NULL`
	qTaskLogGet = `SELECT ` + taskLogCols + ` FROM task_log l WHERE l.log_key = $1`
	// qTaskLogsToUpload: remote logs not uploaded, not leased, whose try
	// has ended: its task instance moved to a later try, or is in a state
	// in which this try writes no more (not waiting, running or deferred),
	// or is gone; a try someone else ended (a mark, or a clear that
	// archived it running) store.LateLogGrace after ($3).
	qTaskLogsToUpload = `SELECT ` + taskLogCols + ` FROM task_log l
		LEFT JOIN dag_run r ON r.dag_id = l.dag_id AND r.run_id = l.run_id
		LEFT JOIN task_instance ti ON ti.dag_run_id = r.id AND ti.task_id = l.task_id AND ti.map_index = l.map_index
		WHERE l.kind = 'remote' AND l.pruned_at IS NULL AND l.stored_at IS NULL AND l.lease_until < $1
			AND (ti.id IS NULL
				OR (ti.try_number > l.try_number AND NOT EXISTS (SELECT 1 FROM task_instance_history h
					WHERE h.dag_id = l.dag_id AND h.run_id = l.run_id AND h.task_id = l.task_id
						AND h.map_index = l.map_index AND h.try_number = l.try_number AND h.stopped_at >= $3))
				OR (ti.state NOT IN ('', 'scheduled', 'queued', 'running', 'deferred', 'restarting')
					AND COALESCE(ti.stopped_at, 0) < $3))
		ORDER BY l.created_at, l.log_key LIMIT $2`
	qTaskLogLease = `UPDATE task_log SET lease_until = $3
		WHERE log_key = $1 AND stored_at IS NULL AND lease_until < $2`
	qTaskLogStored = `UPDATE task_log SET location = $2, size = $3, stored_at = $4, error = '', lease_until = 0
		WHERE log_key = $1`
	qTaskLogChunksDelete = `DELETE FROM task_log_chunk WHERE log_key = $1`
	qTaskLogFailed       = `UPDATE task_log SET attempts = attempts + 1, error = $2, lease_until = $3 WHERE log_key = $1`
	qTaskLogsStored      = `SELECT ` + taskLogCols + ` FROM task_log l
		WHERE l.kind = 'remote' AND l.stored_at IS NOT NULL AND l.pruned_at IS NULL AND l.stored_at < $1
		ORDER BY l.stored_at, l.log_key LIMIT $2`
	qTaskLogPruned = `UPDATE task_log SET pruned_at = $2 WHERE log_key = $1`
)

// TaskLogRecord implements store.Store. In a transaction (a try's end
// storing its log's tail) the record waits for the next statement
// (Deferred).
func (s *Store) TaskLogRecord(ctx context.Context, p *store.TaskLog) error {
	_, err := s.writer().ExecContext(Deferred(ctx), qTaskLogRecord, p.Key, p.DagID, p.RunID, p.TaskID, p.MapIndex, p.TryNumber,
		p.Kind, p.Location, micros(p.CreatedAt))
	return s.wrap(err, "record task log %s", p.Key)
}

// TaskLogGet implements store.Store.
func (s *Store) TaskLogGet(ctx context.Context, key string) (*store.TaskLog, error) {
	l, err := scanTaskLog(s.reader().QueryRowContext(ctx, qTaskLogGet, key))
	if err != nil {
		return nil, s.wrap(err, "get task log record %s", key)
	}
	return &l, nil
}

// TaskLogsToUpload implements store.Store.
func (s *Store) TaskLogsToUpload(ctx context.Context, now time.Time, limit int) ([]store.TaskLog, error) {
	rows, err := s.reader().QueryContext(ctx, qTaskLogsToUpload, micros(now), limit, micros(now.Add(-store.LateLogGrace)))
	if err != nil {
		return nil, s.wrap(err, "list task logs to upload")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.TaskLog, error) { return scanTaskLog(r) })
	return out, s.wrap(err, "list task logs to upload")
}

// TaskLogLease implements store.Store.
func (s *Store) TaskLogLease(ctx context.Context, key string, now, until time.Time) (bool, error) {
	res, err := s.writer().ExecContext(ctx, qTaskLogLease, key, micros(now), micros(until))
	if err != nil {
		return false, s.wrap(err, "lease the upload of task log %s", key)
	}
	n, err := res.RowsAffected()
	return n == 1, s.wrap(err, "lease the upload of task log %s", key)
}

// TaskLogStored implements store.Store.
func (s *Store) TaskLogStored(ctx context.Context, key, location string, size int64, now time.Time) error {
	return s.inTx(ctx, func(tx *Store) error {
		if _, err := tx.writer().ExecContext(ctx, qTaskLogStored, key, location, size, micros(now)); err != nil {
			return tx.wrap(err, "mark task log %s uploaded", key)
		}
		_, err := tx.writer().ExecContext(ctx, qTaskLogChunksDelete, key)
		return tx.wrap(err, "delete the chunks of uploaded task log %s", key)
	})
}

// TaskLogUploadFailed implements store.Store.
func (s *Store) TaskLogUploadFailed(ctx context.Context, key, reason string, retryAt time.Time) error {
	_, err := s.writer().ExecContext(ctx, qTaskLogFailed, key, reason, micros(retryAt))
	return s.wrap(err, "record a failed upload of task log %s", key)
}

// TaskLogsStoredBefore implements store.Store.
func (s *Store) TaskLogsStoredBefore(ctx context.Context, before time.Time, limit int) ([]store.TaskLog, error) {
	rows, err := s.reader().QueryContext(ctx, qTaskLogsStored, micros(before), limit)
	if err != nil {
		return nil, s.wrap(err, "list uploaded task logs")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.TaskLog, error) { return scanTaskLog(r) })
	return out, s.wrap(err, "list uploaded task logs")
}

// TaskLogPruned implements store.Store.
func (s *Store) TaskLogPruned(ctx context.Context, key string, now time.Time) error {
	return s.inTx(ctx, func(tx *Store) error {
		if _, err := tx.writer().ExecContext(ctx, qTaskLogChunksDelete, key); err != nil {
			return tx.wrap(err, "delete the chunks of task log %s", key)
		}
		_, err := tx.writer().ExecContext(ctx, qTaskLogPruned, key, micros(now))
		return tx.wrap(err, "mark task log %s pruned", key)
	})
}

// scanTaskLog reads one row of taskLogCols.
func scanTaskLog(r interface{ Scan(...any) error }) (store.TaskLog, error) {
	var l store.TaskLog
	var created int64
	var stored, pruned sql.NullInt64
	err := r.Scan(&l.Key, &l.DagID, &l.RunID, &l.TaskID, &l.MapIndex, &l.TryNumber, &l.Kind, &l.Location,
		&l.Size, &l.Attempts, &l.Error, &created, &stored, &pruned)
	l.CreatedAt, l.StoredAt, l.PrunedAt = fromMicros(created), ptrMicros(stored), ptrMicros(pruned)
	return l, err
}
