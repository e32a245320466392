package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The callback queries (docs/emission.md#callbacks).
const (
	callbackCols = `id, level, event, dag_id, run_id, dag_run_id, task_id, map_index, try_number, spec_index,
		spec, outcome, state, attempts, worker_id, heartbeat, started_at, ended_at, error, created_at`
	qCallbackInsert = `INSERT INTO callback (level, event, dag_id, run_id, dag_run_id, task_id, map_index,
		try_number, spec_index, spec, outcome, state, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'queued', $12)`
	// qCallbackClaim picks the oldest queued callbacks once (a materialized
	// CTE, as the task instance claim) and re-checks each on update; the
	// first %s confines it to one run (qCallbackOfRun, else
	// qNotOfTests), the
	// second is the dialect's row lock.
	qCallbackClaim = `WITH picked AS MATERIALIZED (
			SELECT id FROM callback WHERE state = 'queued'%s ORDER BY id LIMIT $3 %s)
		UPDATE callback SET state = 'running', worker_id = $1, heartbeat = $2, started_at = $2,
			attempts = attempts + 1, error = ''
		WHERE id IN (SELECT id FROM picked) AND state = 'queued'
		RETURNING ` + callbackCols
	qCallbackOfRun     = ` AND dag_run_id = $4`
	qCallbackGet       = `SELECT ` + callbackCols + ` FROM callback WHERE id = $1`
	qCallbackHeartbeat = `UPDATE callback SET heartbeat = $3 WHERE id = $1 AND attempts = $2 AND state = 'running'`
	qCallbackFinish    = `UPDATE callback SET state = $3, error = $4, ended_at = $5, heartbeat = $5
		WHERE id = $1 AND attempts = $2 AND state = 'running'`
	qCallbackRequeue = `UPDATE callback SET state = 'queued', worker_id = NULL, heartbeat = NULL,
		error = 'its worker stopped heartbeating; queued again'
		WHERE state = 'running' AND heartbeat < $1 AND attempts < $2`
	qCallbackFailStale = `UPDATE callback SET state = 'failed', ended_at = $3,
		error = $4
		WHERE state = 'running' AND heartbeat < $1 AND attempts >= $2`
	// qCallbackFailOfRun fails a run's callbacks not ended (DagRunEndTest).
	qCallbackFailOfRun = `UPDATE callback SET state = 'failed', ended_at = $2, heartbeat = $2, error = $3
		WHERE dag_run_id = $1 AND state IN ('queued', 'running')`
	qCallbackList  = `SELECT ` + callbackCols + ` FROM callback%s%s%s`
	qCallbackCount = `SELECT COUNT(*) FROM callback%s`
)

var callbackOrder = orderSpec{order: store.CallbackOrder, def: "id", key: []string{"id"},
	cols: map[string]string{"id": "id", "created_at": "created_at", "state": "state"}}

// CallbackInsert records fired callbacks as queued and notifies workers.
func (s *Store) CallbackInsert(ctx context.Context, cbs []core.Callback, now time.Time) error {
	if len(cbs) == 0 {
		return nil
	}
	for i := range cbs {
		cb := &cbs[i]
		spec, err := json.Marshal(cb.Spec)
		if err != nil {
			return fmt.Errorf("record %s callback of %s/%s: %w", cb.Event, cb.DagID, cb.RunID, err)
		}
		if _, err := s.writer().ExecContext(ctx, qCallbackInsert, string(cb.Level), string(cb.Event), cb.DagID, cb.RunID,
			cb.DagRunID, cb.TaskID, cb.MapIndex, cb.TryNumber, cb.SpecIndex, string(spec), cb.Outcome, micros(now)); err != nil {
			return s.wrap(err, "record %s callback of %s/%s", cb.Event, cb.DagID, cb.RunID)
		}
	}
	return s.Notify(ctx, store.ChannelCallbacks)
}

// CallbackClaim marks up to p.Limit queued callbacks as running for
// p.WorkerID, oldest first.
func (s *Store) CallbackClaim(ctx context.Context, p *store.CallbackClaimParams) ([]core.Callback, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	if p.WorkerID == "" {
		return nil, fmt.Errorf("claim callbacks: empty worker id: %w", core.ErrInvalid)
	}
	what := "claim callbacks for worker " + p.WorkerID
	args, ofRun := []any{p.WorkerID, micros(p.Now), p.Limit}, qNotOfTests
	if p.DagRunID != 0 {
		args, ofRun = append(args, p.DagRunID), qCallbackOfRun
	}
	rows, err := s.writer().QueryContext(ctx, fmt.Sprintf(qCallbackClaim, ofRun, s.d.ClaimLock), args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (core.Callback, error) { return scanCallback(r) })
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	slices.SortFunc(out, func(a, b core.Callback) int { return int(a.ID - b.ID) }) // RETURNING has no order
	return out, nil
}

// CallbackGet returns one callback or ErrNotFound.
func (s *Store) CallbackGet(ctx context.Context, id int64) (*core.Callback, error) {
	cb, err := scanCallback(s.reader().QueryRowContext(ctx, qCallbackGet, id))
	if err != nil {
		return nil, s.wrap(err, "get callback %d", id)
	}
	return &cb, nil
}

// CallbackHeartbeat records that the worker running attempt of callback
// id is alive.
func (s *Store) CallbackHeartbeat(ctx context.Context, id int64, attempt int, now time.Time) error {
	what := fmt.Sprintf("heartbeat attempt %d of callback %d", attempt, id)
	return s.runningCallbackOnly(ctx, what, id, attempt, qCallbackHeartbeat, id, attempt, micros(now))
}

// CallbackFinish ends a running callback as success or failed.
func (s *Store) CallbackFinish(ctx context.Context, p *store.CallbackFinishParams) error {
	what := fmt.Sprintf("finish callback %d as %s", p.ID, p.State)
	if !p.State.Terminal() {
		return fmt.Errorf("%s: a callback ends as success or failed: %w", what, core.ErrInvalid)
	}
	return s.runningCallbackOnly(ctx, what, p.ID, p.Attempt, qCallbackFinish, p.ID, p.Attempt, string(p.State), p.Error, micros(p.Now))
}

// runningCallbackOnly runs an update of a callback's running attempt;
// when nothing changed it says why (ErrNotFound or ErrConflict).
func (s *Store) runningCallbackOnly(ctx context.Context, what string, id int64, attempt int, query string, args ...any) error {
	err := s.execOne(ctx, what, query, args...)
	if !errors.Is(err, core.ErrNotFound) {
		return err
	}
	cur, err := s.CallbackGet(ctx, id)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: it is %s in attempt %d (worker %q), not running in attempt %d: %w",
		what, cur.State, cur.Attempts, cur.WorkerID, attempt, core.ErrConflict)
}

// CallbackRequeueStale queues again, or fails, the running callbacks of
// workers that stopped heartbeating.
func (s *Store) CallbackRequeueStale(ctx context.Context, p *store.CallbackStaleParams) (requeued, failed int, err error) {
	err = s.inTx(ctx, func(tx *Store) error {
		res, err := tx.writer().ExecContext(ctx, qCallbackRequeue, micros(p.Before), p.MaxAttempts)
		if err != nil {
			return tx.wrap(err, "queue again the callbacks of dead workers")
		}
		n, _ := res.RowsAffected()
		requeued = int(n)
		if res, err = tx.writer().ExecContext(ctx, qCallbackFailStale, micros(p.Before), p.MaxAttempts, micros(p.Now),
			fmt.Sprintf("its worker stopped heartbeating, and it has had its %d attempts", p.MaxAttempts)); err != nil {
			return tx.wrap(err, "fail the callbacks of dead workers")
		}
		n, _ = res.RowsAffected()
		failed = int(n)
		if requeued > 0 {
			return tx.Notify(ctx, store.ChannelCallbacks)
		}
		return nil
	})
	return requeued, failed, err
}

// CallbackList lists a page of a run's callbacks.
func (s *Store) CallbackList(ctx context.Context, p *store.CallbackListParams) ([]core.Callback, error) {
	return listPage(ctx, s, fmt.Sprintf("list callbacks of dag run %d", p.DagRunID), qCallbackList,
		callbackFilter(p), &callbackOrder, p.Page, func(r scanner) (*core.Callback, error) {
			cb, err := scanCallback(r)
			return &cb, err
		})
}

// CallbackCount counts a run's callbacks.
func (s *Store) CallbackCount(ctx context.Context, p *store.CallbackListParams) (int, error) {
	return s.count(ctx, fmt.Sprintf("count callbacks of dag run %d", p.DagRunID), qCallbackCount, callbackFilter(p))
}

func callbackFilter(p *store.CallbackListParams) *builder {
	b := &builder{}
	b.where("dag_run_id = ?", p.DagRunID)
	if p.TaskID != "" {
		b.where("task_id = ?", p.TaskID)
	}
	in(b, "state", p.States)
	return b
}

func scanCallback(r scanner) (core.Callback, error) {
	var (
		cb                        core.Callback
		level, event, state, spec string
		worker                    sql.NullString
		hb, started, ended        sql.NullInt64
		created                   int64
	)
	if err := r.Scan(&cb.ID, &level, &event, &cb.DagID, &cb.RunID, &cb.DagRunID, &cb.TaskID, &cb.MapIndex, &cb.TryNumber,
		&cb.SpecIndex, &spec, &cb.Outcome, &state, &cb.Attempts, &worker, &hb, &started, &ended, &cb.Error, &created); err != nil {
		return cb, err
	}
	cb.Level, cb.Event, cb.State = core.CallbackLevel(level), core.CallbackEvent(event), core.CallbackState(state)
	cb.WorkerID = worker.String
	cb.Heartbeat, cb.StartedAt, cb.EndedAt = ptrMicros(hb), ptrMicros(started), ptrMicros(ended)
	cb.CreatedAt = fromMicros(created)
	if err := json.Unmarshal([]byte(spec), &cb.Spec); err != nil {
		return cb, fmt.Errorf("decode the spec of callback %d: %w", cb.ID, err)
	}
	return cb, nil
}
