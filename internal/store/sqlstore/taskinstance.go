package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// scanTI reads one row in tiCols order.
func scanTI(r scanner) (*core.TaskInstance, error) {
	var (
		ti                                       core.TaskInstance
		state                                    string
		worker                                   sql.NullString
		mapArgs, nextKwargs, nextEvent           sql.NullString
		queued, start, end, beat, retry, version sql.NullInt64
		triggerID, triggerTimeout, stopped       sql.NullInt64
	)
	if err := r.Scan(&ti.ID, &ti.DagRunID, &ti.DagID, &ti.RunID, &ti.TaskID, &ti.MapIndex, &ti.TryNumber,
		&ti.MaxTries, &state, &ti.Queue, &ti.Pool, &ti.PoolSlots, &ti.PriorityWeight, &ti.Operator,
		&ti.Hostname, &worker, &ti.PID, &queued, &start, &end, &beat, &retry, &version, &mapArgs,
		&triggerID, &triggerTimeout, &ti.NextMethod, &nextKwargs, &nextEvent, &ti.Interruptions, &stopped); err != nil {
		return nil, err
	}
	ti.State = core.TIState(state)
	ti.WorkerID = worker.String
	ti.QueuedAt, ti.StartDate, ti.EndDate = ptrMicros(queued), ptrMicros(start), ptrMicros(end)
	ti.LastHeartbeat, ti.NextRetryAt = ptrMicros(beat), ptrMicros(retry)
	ti.DagVersionID = version.Int64
	ti.MapArgs = rawJSON(mapArgs)
	if triggerID.Valid {
		ti.TriggerID = &triggerID.Int64
	}
	ti.TriggerTimeout, ti.StoppedAt = ptrMicros(triggerTimeout), ptrMicros(stopped)
	ti.NextKwargs, ti.NextEvent = rawJSON(nextKwargs), rawJSON(nextEvent)
	return &ti, nil
}

// scanTIs reads every row of a task-instance query.
func scanTIs(rows *sql.Rows) ([]core.TaskInstance, error) {
	return collect(rows, func(r *sql.Rows) (core.TaskInstance, error) {
		ti, err := scanTI(r)
		if err != nil {
			return core.TaskInstance{}, err
		}
		return *ti, nil
	})
}

// queryTIs runs a task-instance query on q and scans the result.
func (s *Store) queryTIs(ctx context.Context, q querier, what, query string, args ...any) ([]core.TaskInstance, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := scanTIs(rows)
	return out, s.wrap(err, "%s", what)
}

// TaskInstanceGet returns the current try with the given id.
func (s *Store) TaskInstanceGet(ctx context.Context, id string) (*core.TaskInstance, error) {
	ti, err := scanTI(s.reader().QueryRowContext(ctx, qTIGet, id))
	if err != nil {
		return nil, s.wrap(err, "get task instance %s", id)
	}
	return ti, nil
}

// TaskInstanceGetByKey finds the current try of (dag, run, task, map index).
func (s *Store) TaskInstanceGetByKey(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error) {
	ti, err := scanTI(s.reader().QueryRowContext(ctx, qTIGetByKey, dagID, runID, taskID, mapIndex))
	if err != nil {
		return nil, s.wrap(err, "get task instance %s/%s/%s[%d]", dagID, runID, taskID, mapIndex)
	}
	return ti, nil
}

// TaskInstanceList lists a page of task instances (by run, task and map
// index unless p says otherwise).
func (s *Store) TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error) {
	order, page := &tiOrder, p.Page
	switch {
	case p.OrderByPriority:
		order, page.OrderBy = &tiPriorityOrder, ""
	case p.Unordered:
		order, page.OrderBy = &unordered, ""
	}
	return listPage(ctx, s, "list task instances", qTIList, tiFilter(p), order, page, scanTI)
}

// TaskInstanceStates lists the id and state of the tries TaskInstanceList
// would list, unordered, at most p.Limit of them when it is set.
func (s *Store) TaskInstanceStates(ctx context.Context, p *store.TaskInstanceListParams) ([]store.TaskInstanceState, error) {
	b := tiFilter(p)
	where := b.clause()
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qTIStates, where+b.page(p.Limit, 0)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "list task instance states")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.TaskInstanceState, error) {
		var st store.TaskInstanceState
		err := r.Scan(&st.ID, &st.State)
		return st, err
	})
	return out, s.wrap(err, "list task instance states")
}

// TaskInstanceCount counts the task instances TaskInstanceList would list
// without paging.
func (s *Store) TaskInstanceCount(ctx context.Context, p *store.TaskInstanceListParams) (int, error) {
	return s.count(ctx, "count task instances", qTICount, tiFilter(p))
}

// tiFilter is the WHERE clause of TaskInstanceList and TaskInstanceCount.
func tiFilter(p *store.TaskInstanceListParams) *builder {
	var b builder
	if p.DagRunID != 0 {
		b.where("dag_run_id = ?", p.DagRunID)
	}
	switch {
	case p.DagID != "" && p.RunID != "":
		b.where("dag_run_id = (SELECT id FROM dag_run WHERE dag_id = ? AND run_id = ?)", p.DagID, p.RunID)
	case p.DagID != "":
		b.where("dag_id = ?", p.DagID)
	case p.RunID != "": // runs of that id across DAGs
		b.where("dag_run_id IN (SELECT id FROM dag_run WHERE run_id = ?)", p.RunID)
	}
	if p.TaskID != "" {
		b.where("task_id = ?", p.TaskID)
	}
	in(&b, "task_id", p.TaskIDs)
	in(&b, "dag_id", p.DagIDs)
	if len(p.RunIDs) > 0 {
		b.conds = append(b.conds, "dag_run_id IN (SELECT id FROM dag_run WHERE run_id IN ("+list(&b, p.RunIDs)+"))")
	}
	if p.MapIndex != nil {
		b.where("map_index = ?", *p.MapIndex)
	}
	if p.Mapped {
		b.where("map_index >= 0")
	}
	in(&b, "id", p.IDs)
	in(&b, "state", p.States)
	if len(p.ExceptDagIDs) > 0 {
		b.where("dag_id NOT IN (" + list(&b, p.ExceptDagIDs) + ")")
	}
	if len(p.ExceptPools) > 0 {
		b.where("pool NOT IN (" + list(&b, p.ExceptPools) + ")")
	}
	in(&b, "pool", p.Pools)
	in(&b, "queue", p.Queues)
	in(&b, "operator", p.Operators)
	b.within("start_date", p.StartDate)
	b.within("end_date", p.EndDate)
	if p.TriggerID != 0 {
		b.where("trigger_id = ?", p.TriggerID)
	}
	if !p.UpdatedSince.IsZero() {
		b.where("updated_at >= ?", micros(p.UpdatedSince))
	}
	return &b
}

// TaskInstanceStateCounts counts the current tries of the runs per (run,
// task, state) in one grouped query over the (dag_run_id, task_id,
// map_index) key.
func (s *Store) TaskInstanceStateCounts(ctx context.Context, dagRunIDs []int64, taskIDs ...string) ([]store.TaskInstanceStateCount, error) {
	if len(dagRunIDs) == 0 {
		return nil, nil
	}
	var b builder
	runs, tasks := ints(&b, dagRunIDs), ""
	if len(taskIDs) > 0 {
		tasks = " AND task_id IN (" + list(&b, taskIDs) + ")"
	}
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qTIStateCounts, runs, tasks), b.args...)
	if err != nil {
		return nil, s.wrap(err, "count task instance states")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.TaskInstanceStateCount, error) {
		var (
			c          store.TaskInstanceStateCount
			state      string
			maxIndex   int
			start, end sql.NullInt64
		)
		err := r.Scan(&c.DagRunID, &c.TaskID, &state, &c.Count, &maxIndex, &start, &end)
		c.State, c.Mapped = core.TIState(state), maxIndex >= 0
		c.FirstStart, c.LastEnd = ptrMicros(start), ptrMicros(end)
		return c, err
	})
	return out, s.wrap(err, "count task instance states")
}

// idBatch bounds the ids of one bulk statement.
const idBatch = 500

// TaskInstanceSetState moves each listed instance to p.To when its state is
// one of p.From and returns the ids that moved. Entering queued stamps
// queued_at and drops any claim; a terminal state or up_for_retry stamps the
// end date. next_retry_at becomes p.NextRetryAt.
func (s *Store) TaskInstanceSetState(ctx context.Context, p *store.TaskInstanceSetStateParams) ([]string, error) {
	var moved []string
	err := s.inTxIf(ctx, len(p.IDs) > idBatch, func(tx *Store) error {
		for start := 0; start < len(p.IDs); start += idBatch {
			ids := p.IDs[start:min(start+idBatch, len(p.IDs))]
			b := builder{args: []any{string(p.To), micros(p.Now), nullMicros(p.NextRetryAt),
				p.To == core.TIQueued, p.To.Terminal() || p.To == core.TIUpForRetry}}
			idList := list(&b, ids)
			cond := ""
			if len(p.From) > 0 {
				cond = " AND state IN (" + list(&b, p.From) + ")"
			}
			query := fmt.Sprintf(qTISetState, idList, cond)
			if p.Unread {
				if _, err := tx.writer().ExecContext(Deferred(ctx), query, b.args...); err != nil {
					return tx.wrap(err, "set state of %d task instances to %s", len(ids), p.To)
				}
				continue
			}
			rows, err := tx.writer().QueryContext(ctx, query+" RETURNING id", b.args...)
			if err != nil {
				return tx.wrap(err, "set state of %d task instances to %s", len(ids), p.To)
			}
			got, err := collect(rows, scanString)
			if err != nil {
				return tx.wrap(err, "set state of %d task instances to %s", len(ids), p.To)
			}
			moved = append(moved, got...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}

// TaskInstanceExpand replaces a mapped task's placeholder with its map
// indexes, or marks the placeholder skipped when there are none. ErrConflict
// when the task was already expanded, ErrNotFound when it has no placeholder.
func (s *Store) TaskInstanceExpand(ctx context.Context, p *store.TaskInstanceExpandParams) error {
	what := fmt.Sprintf("expand task %s of dag run %d", p.TaskID, p.DagRunID)
	return s.inTx(ctx, func(tx *Store) error {
		var placeholder string
		err := tx.tx.QueryRowContext(ctx, qTIPlaceholder, p.DagRunID, p.TaskID).Scan(&placeholder)
		if errors.Is(err, sql.ErrNoRows) {
			var n int
			if err := tx.tx.QueryRowContext(ctx, qTIMappedCount, p.DagRunID, p.TaskID).Scan(&n); err != nil {
				return tx.wrap(err, "%s", what)
			}
			if n > 0 {
				return fmt.Errorf("%s: already expanded into %d instances: %w", what, n, core.ErrConflict)
			}
			return fmt.Errorf("%s: no unexpanded task instance: %w", what, core.ErrNotFound)
		}
		if err != nil {
			return tx.wrap(err, "%s", what)
		}
		if len(p.Instances) == 0 {
			_, err := tx.tx.ExecContext(ctx, qTISkip, placeholder, micros(p.Now))
			return tx.wrap(err, "%s: skip", what)
		}
		run, err := tx.DagRunGetByID(ctx, p.DagRunID)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if _, err := tx.tx.ExecContext(ctx, qTIDelete, placeholder); err != nil {
			return tx.wrap(err, "%s: remove placeholder", what)
		}
		return tx.insertTIs(ctx, run, p.Instances, p.Now)
	})
}

// TaskInstanceNewTry archives the current try to task_instance_history and
// starts the next one under p.NewID with try_number+1 and state p.To; the
// claim, worker and dates are cleared (next_retry_at is kept only when To is
// up_for_retry).
func (s *Store) TaskInstanceNewTry(ctx context.Context, p *store.TaskInstanceNewTryParams) error {
	what := fmt.Sprintf("start new try of task instance %s", p.ID)
	return s.inTx(ctx, func(tx *Store) error {
		archive, args := qTIArchive, []any{p.ID, micros(p.Now)}
		if p.From != "" {
			archive, args = qTIArchiveFrom, append(args, string(p.From))
		}
		res, err := tx.tx.ExecContext(ctx, archive, args...)
		if err := tx.affectedOne(res, err, what+": archive"); err != nil {
			return tx.notInState(ctx, p, err)
		}
		// The ended try's pending additions to alias outlets die with it
		// (only a success turns them into events); they also reference the
		// id that is about to change.
		if _, err := tx.tx.ExecContext(ctx, qAliasEventDelete, p.ID); err != nil {
			return tx.wrap(err, "%s: drop pending alias additions", what)
		}
		query, args := qTINewTry, []any{p.ID, p.NewID, p.ExtraTries, string(p.To), micros(p.Now), p.To == core.TIUpForRetry}
		if p.From != "" {
			query, args = qTINewTryFrom, append(args, string(p.From))
		}
		res, err = tx.tx.ExecContext(ctx, query, args...)
		if err := tx.affectedOne(res, err, what); err != nil {
			return tx.notInState(ctx, p, err)
		}
		return nil
	})
}

// notInState turns a new try's write that changed no row into ErrConflict
// when the try exists in another state than p.From (a worker took it back
// meanwhile); other errors pass.
func (s *Store) notInState(ctx context.Context, p *store.TaskInstanceNewTryParams, err error) error {
	if !errors.Is(err, core.ErrNotFound) || p.From == "" {
		return err
	}
	cur, gerr := s.TaskInstanceGet(ctx, p.ID)
	if gerr != nil {
		return fmt.Errorf("%w (%w)", err, gerr)
	}
	return fmt.Errorf("start new try of task instance %s: it is %s, not %s: %w", p.ID, cur.State, p.From, core.ErrConflict)
}

// TaskInstanceArchived implements store.Store.
func (s *Store) TaskInstanceArchived(ctx context.Context, id string) (*core.TaskInstance, error) {
	tis, err := s.queryTIs(ctx, s.reader(), "archived try "+id, qTIArchived, id)
	switch {
	case err != nil:
		return nil, err
	case len(tis) == 0:
		return nil, fmt.Errorf("archived try %s: %w", id, core.ErrNotFound)
	}
	return &tis[0], nil
}

// TaskInstanceHistory returns earlier tries, oldest first.
func (s *Store) TaskInstanceHistory(ctx context.Context, dagID, runID, taskID string, mapIndex int) ([]core.TaskInstance, error) {
	what := fmt.Sprintf("history of task instance %s/%s/%s[%d]", dagID, runID, taskID, mapIndex)
	return s.queryTIs(ctx, s.reader(), what, qTIHistory, dagID, runID, taskID, mapIndex)
}
