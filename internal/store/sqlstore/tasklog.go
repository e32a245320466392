package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

const (
	qTaskLogSize = `SELECT COALESCE(MAX(end_at), 0) FROM task_log_chunk WHERE log_key = $1`
	// qTaskLogInsert stores a chunk at the log's end; a chunk already
	// stored there (a concurrent append of the same bytes) wins.
	qTaskLogInsert = `INSERT INTO task_log_chunk (log_key, start_at, end_at, data, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (log_key, start_at) DO NOTHING`
	// qTaskLogAppendPast stores what of the log's first $2 bytes ($3) lies
	// past its end, in one statement (%s: Dialect.BlobType).
	qTaskLogAppendPast = `INSERT INTO task_log_chunk (log_key, start_at, end_at, data, created_at)
		SELECT $1, size, $2, substr(CAST($3 AS %s), CAST(size + 1 AS INTEGER)), $4
		FROM (SELECT COALESCE(MAX(end_at), 0) AS size FROM task_log_chunk WHERE log_key = $1) AS log
		WHERE size < $2
		ON CONFLICT (log_key, start_at) DO NOTHING`
	// qTaskLogRead lists the chunks holding bytes at or after $2, in order.
	qTaskLogRead = `SELECT start_at, data FROM task_log_chunk WHERE log_key = $1 AND end_at > $2
		ORDER BY start_at LIMIT $3`
	// qTaskLogPruneScan reads the next $2 logs after $1 with when each was
	// last written: a range of the primary key.
	qTaskLogPruneScan = `SELECT log_key, MAX(created_at) FROM task_log_chunk WHERE log_key > $1
		GROUP BY log_key ORDER BY log_key LIMIT $2`
	// qTaskLogPrune deletes, among the logs it names (from $2 on), those
	// whose last chunk is still older than $1, but the log of a try that
	// has not ended (a long quiet step is no old log).
	qTaskLogPrune = `DELETE FROM task_log_chunk WHERE log_key IN (
		SELECT log_key FROM task_log_chunk WHERE log_key IN (%[1]s) GROUP BY log_key HAVING MAX(created_at) < $1)
		AND log_key NOT IN (SELECT l.log_key FROM task_log l
			JOIN dag_run r ON r.dag_id = l.dag_id AND r.run_id = l.run_id
			JOIN task_instance ti ON ti.dag_run_id = r.id AND ti.task_id = l.task_id AND ti.map_index = l.map_index
			WHERE l.log_key IN (%[1]s) AND ti.try_number = l.try_number
				AND ti.state IN ('', 'scheduled', 'queued', 'running', 'deferred', 'up_for_retry', 'restarting'))`
)

// appendTries bounds TaskLogAppend's retries when concurrent appends of
// the same log keep moving its end.
const appendTries = 5

// TaskLogAppend stores p.Data as the bytes of the log p.Key from p.Offset
// on, appending only what the log does not hold yet, and returns the log's
// length afterwards. A chunk that starts past the end is refused with
// core.ErrConflict and the length it must start at.
func (s *Store) TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (int64, error) {
	end := p.Offset + int64(len(p.Data))
	if p.Deferred {
		if p.Offset != 0 {
			return 0, fmt.Errorf("append to task log %s: a deferred chunk starts at byte 0, not %d: %w", p.Key, p.Offset, core.ErrInvalid)
		}
		if end == 0 {
			return 0, nil
		}
		if s.tx == nil { // nothing to go with
			_, err := s.TaskLogAppend(ctx, &store.TaskLogAppendParams{Key: p.Key, Data: p.Data, Now: p.Now})
			return end, err
		}
		rows, err := s.execCounted(ctx, fmt.Sprintf(qTaskLogAppendPast, s.d.BlobType), p.Key, end, p.Data, micros(p.Now))
		if err != nil {
			return end, s.wrap(err, "append to task log %s", p.Key)
		}
		// Nothing stored: the log was as long already, or an append of
		// the same bytes not yet committed when the statement read the
		// log's end (a worker's shipping of the running log, its answer
		// lost) took the place first and may end short of this chunk. The
		// transaction appends what is missing as any append does.
		s.beforeCommit(func() error {
			n, err := rows()
			if err != nil || n > 0 {
				return s.wrap(err, "append to task log %s", p.Key)
			}
			_, err = s.TaskLogAppend(ctx, &store.TaskLogAppendParams{Key: p.Key, Data: p.Data, Now: p.Now})
			return err
		})
		return end, nil
	}
	if p.Offset == 0 && end > 0 {
		// Every log's first chunk starts at 0: this one is stored unless
		// the log has one already (then its end is read below), one
		// statement for a try whose whole log is one report's tail.
		res, err := s.writer().ExecContext(ctx, qTaskLogInsert, p.Key, 0, end, p.Data, micros(p.Now))
		if err != nil {
			return 0, s.wrap(err, "append to task log %s", p.Key)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return end, s.wrap(err, "append to task log %s", p.Key)
		}
	}
	for range appendTries {
		size, err := s.TaskLogSize(ctx, p.Key)
		switch {
		case err != nil:
			return 0, err
		case p.Offset > size:
			return size, fmt.Errorf("log chunk of %s starts at byte %d, past the log's end at byte %d: %w", p.Key, p.Offset, size, core.ErrConflict)
		case end <= size:
			return size, nil
		}
		res, err := s.writer().ExecContext(ctx, qTaskLogInsert, p.Key, size, end, p.Data[size-p.Offset:], micros(p.Now))
		if err != nil {
			return size, s.wrap(err, "append to task log %s", p.Key)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return end, s.wrap(err, "append to task log %s", p.Key)
		}
	}
	return 0, fmt.Errorf("append to task log %s: its end kept moving under concurrent appends", p.Key)
}

// TaskLogSize returns how many bytes the log key holds (0 when none).
func (s *Store) TaskLogSize(ctx context.Context, key string) (int64, error) {
	var size int64
	err := s.reader().QueryRowContext(ctx, qTaskLogSize, key).Scan(&size)
	return size, s.wrap(err, "size of task log %s", key)
}

// TaskLogRead returns up to limit bytes of the log key from offset and the
// offset to continue from; a log without any chunk wraps core.ErrNotFound.
func (s *Store) TaskLogRead(ctx context.Context, key string, offset int64, limit int) ([]byte, int64, error) {
	rows, err := s.reader().QueryContext(ctx, qTaskLogRead, key, offset, 64)
	if err != nil {
		return nil, offset, s.wrap(err, "read task log %s", key)
	}
	type chunk struct {
		start int64
		data  []byte
	}
	chunks, err := collect(rows, func(r *sql.Rows) (chunk, error) {
		var c chunk
		err := r.Scan(&c.start, &c.data)
		return c, err
	})
	if err != nil {
		return nil, offset, s.wrap(err, "read task log %s", key)
	}
	if len(chunks) == 0 {
		size, err := s.TaskLogSize(ctx, key)
		if err == nil && size == 0 {
			err = fmt.Errorf("task log %s: %w", key, core.ErrNotFound)
		}
		return nil, offset, err
	}
	var out []byte
	next := offset
	for _, c := range chunks {
		if c.start > next || len(out) >= limit {
			break
		}
		piece := c.data[next-c.start:]
		piece = piece[:min(len(piece), limit-len(out))]
		out = append(out, piece...)
		next += int64(len(piece))
	}
	return out, next, nil
}

// TaskLogPrune implements store.Store: the batch is read without the
// writer; the delete checks the last writes again (a log may have grown
// meanwhile: a try resumed from a long deferral) and deletes each log
// whole.
func (s *Store) TaskLogPrune(ctx context.Context, p *store.TaskLogPruneParams) (store.TaskLogPruned, error) {
	var out store.TaskLogPruned
	if p.Limit <= 0 {
		return out, fmt.Errorf("prune task logs: a batch looks at 1 log or more, not %d: %w", p.Limit, core.ErrInvalid)
	}
	rows, err := s.reader().QueryContext(ctx, qTaskLogPruneScan, p.After, p.Limit)
	if err != nil {
		return out, s.wrap(err, "read task logs to prune")
	}
	cut := micros(p.Before)
	var (
		old []any
		n   int
	)
	for rows.Next() {
		var last int64
		if err := rows.Scan(&out.Next, &last); err != nil {
			_ = rows.Close()
			return out, s.wrap(err, "read task logs to prune")
		}
		n++
		if last < cut {
			old = append(old, out.Next)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return out, s.wrap(err, "read task logs to prune")
	}
	if n < p.Limit {
		out.Next = "" // the walk reached the end
	}
	if len(old) == 0 {
		return out, nil
	}
	// The keys are padded with "" (no log's key) to a power of two of at
	// least 8, so that a few statement texts serve every batch (each is
	// compiled and kept once).
	size := 8
	for size < len(old) {
		size *= 2
	}
	args := append(make([]any, 0, size+1), cut)
	marks := make([]string, size)
	for i := range marks {
		marks[i] = fmt.Sprintf("$%d", i+2)
		var key any = ""
		if i < len(old) {
			key = old[i]
		}
		args = append(args, key)
	}
	res, err := s.writer().ExecContext(ctx, fmt.Sprintf(qTaskLogPrune, strings.Join(marks, ", ")), args...)
	if err == nil {
		out.Chunks, err = res.RowsAffected()
	}
	return out, s.wrap(err, "prune task logs")
}
