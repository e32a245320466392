package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// DagRunCreate inserts a run and its task instances in one transaction.
func (s *Store) DagRunCreate(ctx context.Context, p *store.DagRunCreateParams) (*core.DagRun, error) {
	run := &core.DagRun{DagID: p.DagID, RunID: p.RunID, RunType: p.RunType, State: p.State,
		LogicalDate: utcPtr(p.LogicalDate), DataIntervalStart: utcPtr(p.DataIntervalStart),
		DataIntervalEnd: utcPtr(p.DataIntervalEnd), Conf: runConf(p.Conf), DagVersionID: p.DagVersionID,
		QueuedAt: p.Now.UTC().Truncate(time.Microsecond), PartitionKey: p.PartitionKey, BackfillID: p.BackfillID,
		TestJobID: p.TestJobID}
	if run.State == "" {
		run.State = core.RunQueued
	}
	if run.State == core.RunRunning {
		start := run.QueuedAt
		run.StartDate = &start
	}
	err := s.inTx(ctx, func(tx *Store) error {
		err := tx.tx.QueryRowContext(ctx, qRunInsert, p.DagID, p.RunID, string(p.RunType), string(run.State),
			nullMicros(p.LogicalDate), nullMicros(p.DataIntervalStart), nullMicros(p.DataIntervalEnd),
			nullJSON(p.Conf), nullID(p.DagVersionID), micros(p.Now), nullMicros(run.StartDate), p.PartitionKey, p.BackfillID, nullStr(p.TestJobID)).Scan(&run.ID)
		if err != nil {
			return tx.wrap(err, "create dag run %s of dag %s", p.RunID, p.DagID)
		}
		return tx.insertTIs(ctx, run, p.TaskInstances, p.Now)
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// utcPtr truncates an optional time to what the store keeps.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC().Truncate(time.Microsecond)
	return &v
}

// tiBatch is how many task instances one INSERT carries (well under both
// engines' bind-parameter limits).
const tiBatch = 500

// insertTIs adds task instances to a run with multi-row INSERTs. Defaults:
// a new UUID, queue "default", pool "default_pool", one slot, one try.
func (s *Store) insertTIs(ctx context.Context, run *core.DagRun, tis []store.NewTaskInstance, now time.Time) error {
	for start := 0; start < len(tis); start += tiBatch {
		chunk := tis[start:min(start+tiBatch, len(tis))]
		args := make([]any, 0, len(chunk)*tiInsertArgs)
		for _, ti := range chunk {
			args = append(args, tiInsertValues(run, &ti, now)...)
		}
		if _, err := s.writer().ExecContext(ctx, fmt.Sprintf(qTIInsert, s.tuples(len(chunk), tiInsertArgs)), args...); err != nil {
			return s.wrap(err, "insert task instances of run %s of dag %s", run.RunID, run.DagID)
		}
	}
	return nil
}

// param returns the placeholder of the n-th (1-based) parameter of a
// generated statement whose parameters appear once each, in order.
func (s *Store) param(n int) string {
	if s.d.AnonymousParams {
		return "?"
	}
	return "$" + strconv.Itoa(n)
}

// tuples returns the VALUES list of a generated multi-row INSERT: rows
// tuples of cols placeholders each, numbered in order.
func (s *Store) tuples(rows, cols int) string {
	tuples := make([]string, rows)
	ph := make([]string, cols)
	for i := range tuples {
		for j := range ph {
			ph[j] = s.param(i*cols + j + 1)
		}
		tuples[i] = "(" + strings.Join(ph, ", ") + ")"
	}
	return strings.Join(tuples, ", ")
}

// tiInsertValues returns one row's values in tiInsertCols order.
func tiInsertValues(run *core.DagRun, ti *store.NewTaskInstance, now time.Time) []any {
	id := ti.ID
	if id == "" {
		id = uuid.NewString()
	}
	queue, pool := ti.Queue, ti.Pool
	if queue == "" {
		queue = core.DefaultQueue
	}
	if pool == "" {
		pool = core.DefaultPool
	}
	var queuedAt any
	if ti.State == core.TIQueued {
		queuedAt = micros(now)
	}
	return []any{id, run.ID, run.DagID, run.RunID, ti.TaskID, ti.MapIndex, 1, max(ti.MaxTries, 1),
		string(ti.State), queue, pool, max(ti.PoolSlots, 1), ti.PriorityWeight, ti.Operator,
		queuedAt, nullID(run.DagVersionID), nullJSON(ti.MapArgs), micros(now)}
}

// DagRunGet returns a run by DAG id and run id.
func (s *Store) DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error) {
	r, err := scanRun(s.reader().QueryRowContext(ctx, qRunGet, dagID, runID))
	if err != nil {
		return nil, s.wrap(err, "get dag run %s of dag %s", runID, dagID)
	}
	return r, nil
}

// DagRunGetByID returns a run by its numeric id.
func (s *Store) DagRunGetByID(ctx context.Context, id int64) (*core.DagRun, error) {
	r, err := scanRun(s.reader().QueryRowContext(ctx, qRunGetByID, id))
	if err != nil {
		return nil, s.wrap(err, "get dag run %d", id)
	}
	return r, nil
}

// DagRunGetPausedWithTasks reads a run, whether its DAG is paused and its
// instances of taskIDs in one statement, Ahead in a transaction.
func (s *Store) DagRunGetPausedWithTasks(ctx context.Context, id int64, taskIDs []string) func() (store.RunWithTasks, error) {
	if len(taskIDs) == 0 {
		return func() (store.RunWithTasks, error) { return store.RunWithTasks{}, nil }
	}
	b := builder{args: []any{id}}
	what := fmt.Sprintf("get dag run %d with its task instances", id)
	return queryAhead(ctx, s, what, fmt.Sprintf(qRunGetPausedWithTasks, list(&b, taskIDs)), b.args, func(rows *sql.Rows) (store.RunWithTasks, error) {
		var (
			run    runRow
			paused bool
			first  = append(run.dest(), &paused)
			rest   = make([]any, len(first)) // the rows after the first: the run again, or NULLs
		)
		for i := range rest {
			rest[i] = new(any)
		}
		tis, err := collect(rows, func(r *sql.Rows) (core.TaskInstance, error) {
			more := first
			if run.run.ID != 0 {
				more = rest
			}
			ti, err := scanTI(withColumns{r, more})
			if err != nil {
				return core.TaskInstance{}, err
			}
			return *ti, nil
		})
		if err != nil || len(tis) == 0 {
			return store.RunWithTasks{}, err
		}
		return store.RunWithTasks{Run: run.made(), Paused: paused, Tasks: tis}, nil
	})
}

// withColumns scans the columns a scan function reads, then more.
type withColumns struct {
	r    scanner
	more []any
}

func (w withColumns) Scan(dest ...any) error { return w.r.Scan(append(dest, w.more...)...) }

// DagRunList lists a page of runs (newest first unless p.OrderBy says
// otherwise).
func (s *Store) DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, error) {
	return listPage(ctx, s, "list dag runs", qRunList, runFilter(p), &dagRunOrder, p.Page, scanRun)
}

// DagRunCount counts the runs DagRunList would list without paging.
func (s *Store) DagRunCount(ctx context.Context, p *store.DagRunListParams) (int, error) {
	return s.count(ctx, "count dag runs", qRunCount, runFilter(p))
}

// DagRunRecent returns the p.PerDag newest runs of each of p.DagIDs, in one
// query over the dag_id index.
func (s *Store) DagRunRecent(ctx context.Context, p *store.DagRunRecentParams) ([]core.DagRun, error) {
	if len(p.DagIDs) == 0 {
		return nil, nil
	}
	if p.PerDag < 1 {
		return nil, fmt.Errorf("recent dag runs: runs per DAG must be at least 1, got %d: %w", p.PerDag, core.ErrInvalid)
	}
	var b builder
	ids := list(&b, p.DagIDs)
	q := fmt.Sprintf(qRunRecent, ids, b.arg(p.PerDag))
	rows, err := s.reader().QueryContext(ctx, q, b.args...)
	if err != nil {
		return nil, s.wrap(err, "recent dag runs")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.DagRun, error) {
		run, err := scanRun(r)
		if err != nil {
			return core.DagRun{}, err
		}
		return *run, nil
	})
	return out, s.wrap(err, "recent dag runs")
}

// runFilter is the WHERE clause of DagRunList and DagRunCount.
func runFilter(p *store.DagRunListParams) *builder {
	var b builder
	if p.DagID != "" {
		b.where("dag_id = ?", p.DagID)
	}
	in(&b, "dag_id", p.DagIDs)
	if len(p.IDs) > 0 {
		ph := make([]string, len(p.IDs))
		for i, id := range p.IDs {
			ph[i] = b.arg(id)
		}
		b.conds = append(b.conds, "id IN ("+strings.Join(ph, ", ")+")")
	}
	in(&b, "state", p.States)
	in(&b, "run_type", p.RunTypes)
	if p.LogicalDateGTE != nil {
		b.where("logical_date >= ?", micros(*p.LogicalDateGTE))
	}
	if p.LogicalDateLTE != nil {
		b.where("logical_date <= ?", micros(*p.LogicalDateLTE))
	}
	b.within("start_date", p.StartDate)
	b.within("end_date", p.EndDate)
	b.within("COALESCE(logical_date, queued_at)", p.RunAfter)
	b.containsFold("run_id", p.RunIDSearch)
	if p.BackfillID != 0 {
		b.where("backfill_id = ?", p.BackfillID)
	}
	if p.Tests {
		b.where("test_job_id IS NOT NULL")
	}
	return &b
}

func scanRun(s scanner) (*core.DagRun, error) {
	var r runRow
	if err := s.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.made(), nil
}

// runRow is where a row's columns in runCols order are scanned to.
type runRow struct {
	run                 core.DagRun
	logical, dis, die   sql.NullInt64
	conf                sql.NullString
	version, start, end sql.NullInt64
	queued              int64
	runType, state      string
	partition, testJob  sql.NullString
	backfill            sql.NullInt64
}

func (r *runRow) dest() []any {
	return []any{&r.run.ID, &r.run.DagID, &r.run.RunID, &r.runType, &r.state, &r.logical, &r.dis, &r.die,
		&r.conf, &r.version, &r.queued, &r.start, &r.end, &r.partition, &r.backfill, &r.testJob}
}

// runConf is a run's conf as every reader sees it: a JSON object, {} for
// none (a scheduled run's).
func runConf(conf json.RawMessage) json.RawMessage {
	if len(conf) == 0 {
		return json.RawMessage(`{}`)
	}
	return conf
}

// made is the run once dest was scanned.
func (r *runRow) made() *core.DagRun {
	run := &r.run
	run.RunType, run.State = core.RunType(r.runType), core.DagRunState(r.state)
	run.LogicalDate, run.DataIntervalStart, run.DataIntervalEnd = ptrMicros(r.logical), ptrMicros(r.dis), ptrMicros(r.die)
	run.Conf = runConf(rawJSON(r.conf))
	run.DagVersionID = r.version.Int64
	run.QueuedAt = fromMicros(r.queued)
	run.StartDate, run.EndDate = ptrMicros(r.start), ptrMicros(r.end)
	if r.partition.Valid {
		run.PartitionKey = &r.partition.String
	}
	if r.backfill.Valid {
		run.BackfillID = &r.backfill.Int64
	}
	run.TestJobID = r.testJob.String
	return run
}

// DagRunSetState moves a run to p.To when its state is one of p.From. Entering
// running sets the start date (once); a terminal state sets the end date and
// any other state clears it, and closes the run's task streams still open
// (a run marked failed while its producer pushed: nothing reads them
// after). ErrNotFound when the run does not exist.
func (s *Store) DagRunSetState(ctx context.Context, p *store.DagRunSetStateParams) (moved bool, err error) {
	err = s.inTxIf(ctx, p.To.Terminal(), func(tx *Store) error {
		b := builder{args: []any{p.ID, string(p.To), micros(p.Now), p.To == core.RunRunning, p.To.Terminal()}}
		cond := ""
		if len(p.From) > 0 {
			cond = " AND state IN (" + list(&b, p.From) + ")"
		}
		res, err := tx.writer().ExecContext(ctx, fmt.Sprintf(qRunSetState, cond), b.args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		switch {
		case err != nil:
			return err
		case n > 0 && p.To.Terminal():
			moved = true
			return tx.closeRunStreams(ctx, p.ID, fmt.Sprintf("the dag run ended %s with the stream open", p.To), p.Now)
		case n > 0:
			moved = true
			return nil
		}
		var one int
		return tx.writer().QueryRowContext(ctx, qRunExists, p.ID).Scan(&one)
	})
	return moved, s.wrap(err, "set state of dag run %d to %s", p.ID, p.To)
}

// closeRunStreams closes the task streams of dag run id still open, with
// reason msg.
func (s *Store) closeRunStreams(ctx context.Context, id int64, msg string, now time.Time) error {
	prefix := core.RunStreamPrefix(id)
	rows, err := s.writer().QueryContext(ctx, qRunStreamsOpen, prefix, len(prefix))
	if err != nil {
		return err
	}
	open, err := collect(rows, scanString)
	if err != nil {
		return err
	}
	for _, sid := range open {
		if _, err := s.StreamClose(ctx, &store.StreamCloseParams{StreamID: sid, Error: msg, Now: now}); err != nil {
			return err
		}
	}
	return nil
}

// DagRunEndTest fails the callbacks of a test's run not ended yet and
// makes the run no test's, in one transaction.
func (s *Store) DagRunEndTest(ctx context.Context, p *store.DagRunEndTestParams) (failed int, err error) {
	what := fmt.Sprintf("end the dags test of dag run %d", p.ID)
	err = s.inTx(ctx, func(tx *Store) error {
		res, err := tx.writer().ExecContext(ctx, qRunEndTest, p.ID)
		if err != nil {
			return tx.wrap(err, "%s", what)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return tx.wrap(err, "%s", what) // no test's run: nothing to end
		}
		if res, err = tx.writer().ExecContext(ctx, qCallbackFailOfRun, p.ID, micros(p.Now), p.Error); err != nil {
			return tx.wrap(err, "%s: fail its unfinished callbacks", what)
		}
		n, err := res.RowsAffected()
		failed = int(n)
		return tx.wrap(err, "%s: fail its unfinished callbacks", what)
	})
	return failed, err
}

// DagRunLatestScheduled returns the scheduled or backfill run with the
// greatest logical date.
func (s *Store) DagRunLatestScheduled(ctx context.Context, dagID string) (*core.DagRun, error) {
	r, err := scanRun(s.reader().QueryRowContext(ctx, qRunLatestScheduled, dagID))
	if err != nil {
		return nil, s.wrap(err, "get latest scheduled run of dag %s", dagID)
	}
	return r, nil
}

// DagRunPreviousSuccess returns the successful run of dagID with the
// greatest logical date before before, or ErrNotFound.
func (s *Store) DagRunPreviousSuccess(ctx context.Context, dagID string, before time.Time) (*core.DagRun, error) {
	r, err := scanRun(s.reader().QueryRowContext(ctx, qRunPreviousSuccess, dagID, micros(before)))
	if err != nil {
		return nil, s.wrap(err, "get the previous successful run of dag %s", dagID)
	}
	return r, nil
}

// DagRunCountByState counts a DAG's runs per state.
func (s *Store) DagRunCountByState(ctx context.Context, dagID string) (map[core.DagRunState]int, error) {
	rows, err := s.reader().QueryContext(ctx, qRunCountByState, dagID)
	if err != nil {
		return nil, s.wrap(err, "count runs of dag %s", dagID)
	}
	out := map[core.DagRunState]int{}
	_, err = collect(rows, func(r *sql.Rows) (struct{}, error) {
		var (
			state string
			n     int
		)
		err := r.Scan(&state, &n)
		out[core.DagRunState(state)] = n
		return struct{}{}, err
	})
	if err != nil {
		return nil, s.wrap(err, "count runs of dag %s", dagID)
	}
	return out, nil
}
