package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// describeScope names a task-state scope in errors.
func describeScope(sc store.TaskStateScope) string {
	return fmt.Sprintf("dag %q run %q task %q map_index %d", sc.DagID, sc.RunID, sc.TaskID, sc.MapIndex)
}

// TaskStateSet upserts one key; ErrNotFound when the run does not exist,
// ErrInvalid when the value is not JSON.
func (s *Store) TaskStateSet(ctx context.Context, p *store.TaskStateSetParams) error {
	what := fmt.Sprintf("set task state %q of %s", p.Key, describeScope(p.Scope))
	if !json.Valid(p.Value) {
		return fmt.Errorf("%s: value is not valid JSON: %w", what, core.ErrInvalid)
	}
	sc := p.Scope
	res, err := s.hotWrite(qTaskStateSet).exec(ctx, sc.DagID, sc.RunID, sc.TaskID, sc.MapIndex, p.Key, string(p.Value),
		micros(p.Now), p.UpdatedByRun, p.UpdatedByTry, nullMicros(p.ExpiresAt), p.NeverExpire)
	if err != nil {
		return s.wrap(err, "%s", what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.wrap(err, "%s", what)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, core.ErrNotFound)
	}
	return nil
}

// TaskStateTry returns the scope, try number and state of try id.
func (s *Store) TaskStateTry(ctx context.Context, id string) (*store.TaskStateTry, error) {
	var t store.TaskStateTry
	var state string
	err := s.hotRead(qTaskStateTry).queryRow(ctx, id).Scan(&t.Scope.DagID, &t.Scope.RunID, &t.Scope.TaskID,
		&t.Scope.MapIndex, &t.TryNumber, &state)
	if err != nil {
		return nil, s.wrap(err, "get task instance %s", id)
	}
	t.State = core.TIState(state)
	return &t, nil
}

// TaskStateGet returns one entry or ErrNotFound.
func (s *Store) TaskStateGet(ctx context.Context, sc store.TaskStateScope, key string) (*store.TaskStateEntry, error) {
	e, err := scanTaskState(s.hotRead(qTaskStateGet).queryRow(ctx, sc.DagID, sc.RunID, sc.TaskID, sc.MapIndex, key))
	if err != nil {
		return nil, s.wrap(err, "get task state %q of %s", key, describeScope(sc))
	}
	return &e, nil
}

// TaskStateList lists entries by dag, run, task, map index and key.
func (s *Store) TaskStateList(ctx context.Context, p *store.TaskStateListParams) ([]store.TaskStateEntry, error) {
	if p.DagID == "" {
		return nil, fmt.Errorf("list task state: a dag id is required: %w", core.ErrInvalid)
	}
	var b builder
	b.where("dag_id = ?", p.DagID)
	if p.RunID != "" {
		b.where("run_id = ?", p.RunID)
	}
	if p.TaskID != "" {
		b.where("task_id = ?", p.TaskID)
	}
	if p.MapIndex != nil {
		b.where("map_index = ?", *p.MapIndex)
	}
	return s.queryTaskState(ctx, "list task state of dag "+p.DagID, fmt.Sprintf(qTaskStateList, b.clause()), b.args...)
}

// TaskStateDelete deletes one key, or clears a scope when Key is empty.
func (s *Store) TaskStateDelete(ctx context.Context, p *store.TaskStateDeleteParams) (int64, error) {
	sc := p.Scope
	var (
		res sql.Result
		err error
	)
	switch {
	case p.Key != "":
		res, err = s.writer().ExecContext(ctx, qTaskStateDelete, sc.DagID, sc.RunID, sc.TaskID, sc.MapIndex, p.Key)
	case p.AllMapIndices:
		res, err = s.writer().ExecContext(ctx, qTaskStateClearAllMapIndices, sc.DagID, sc.RunID, sc.TaskID)
	default:
		res, err = s.writer().ExecContext(ctx, qTaskStateClear, sc.DagID, sc.RunID, sc.TaskID, sc.MapIndex)
	}
	if err != nil {
		return 0, s.wrap(err, "delete task state of %s", describeScope(sc))
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "delete task state of %s", describeScope(sc))
}

// clearTaskStateOfTry deletes the task state of the instance whose current
// try is id (inside TaskInstanceFinish's transaction).
func (s *Store) clearTaskStateOfTry(ctx context.Context, id string) error {
	_, err := s.writer().ExecContext(ctx, qTaskStateClearTI, id)
	return s.wrap(err, "clear task state of task instance %s", id)
}

// TaskStateExpired lists up to limit (0 = all) expired entries.
func (s *Store) TaskStateExpired(ctx context.Context, before time.Time, limit int) ([]store.TaskStateEntry, error) {
	if limit <= 0 {
		limit = 1 << 31
	}
	return s.queryTaskState(ctx, "list expired task state", qTaskStateExpired, micros(before), limit)
}

// TaskStateDeleteExpired deletes up to limit (0 = all, one statement)
// expired entries and returns how many went.
func (s *Store) TaskStateDeleteExpired(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.deleteUpTo(ctx, "delete expired task state", qTaskStateDeleteExpired, qTaskStateDeleteExpiredBatch, before, limit)
}

// deleteUpTo deletes the rows that all ($1 = cutoff) selects, or, with a
// positive limit, at most limit of them with batch ($1 = cutoff, $2 =
// limit), and returns how many went. Cleanup of both stores uses it.
func (s *Store) deleteUpTo(ctx context.Context, what, all, batch string, cutoff time.Time, limit int) (int64, error) {
	var (
		res sql.Result
		err error
	)
	if limit <= 0 {
		res, err = s.writer().ExecContext(ctx, all, micros(cutoff))
	} else {
		res, err = s.writer().ExecContext(ctx, batch, micros(cutoff), limit)
	}
	if err != nil {
		return 0, s.wrap(err, "%s", what)
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "%s", what)
}

// queryTaskState runs a task-state query and scans every row.
func (s *Store) queryTaskState(ctx context.Context, what, query string, args ...any) ([]store.TaskStateEntry, error) {
	return queryAll(ctx, s, what, query, scanTaskState, args...)
}

// queryAll runs a read query and scans every row with scan; never nil.
func queryAll[T any](ctx context.Context, s *Store, what, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := s.reader().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (T, error) { return scan(r) })
	if out == nil {
		out = []T{}
	}
	return out, s.wrap(err, "%s", what)
}

// scanTaskState reads one row in taskStateCols order.
func scanTaskState(r scanner) (store.TaskStateEntry, error) {
	var (
		e       store.TaskStateEntry
		value   string
		updated int64
		expires sql.NullInt64
	)
	err := r.Scan(&e.DagID, &e.RunID, &e.TaskID, &e.MapIndex, &e.Key, &value, &updated, &e.UpdatedByRun,
		&e.UpdatedByTry, &expires, &e.NeverExpire)
	e.Value = json.RawMessage(value)
	e.UpdatedAt = fromMicros(updated)
	e.ExpiresAt = ptrMicros(expires)
	return e, err
}
