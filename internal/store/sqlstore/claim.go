package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TaskInstanceClaim assigns up to p.Limit queued, unclaimed instances of
// p.Queues (default: the default queue) to p.WorkerID in one statement,
// highest priority_weight first, then oldest queued_at. On PostgreSQL the
// candidate rows are locked with SKIP LOCKED, so concurrent claimers take
// disjoint rows; on SQLite the single writer serializes claims. With
// p.Reclaim the worker's own queued claims that it does not hold (the
// answer to an earlier claim was lost) come first, claimed again; with
// p.PID too, before them, the running tries that process started and does
// not hold, as they are. With p.Start the claimed tries are started in the
// same statement.
func (s *Store) TaskInstanceClaim(ctx context.Context, p *store.TaskInstanceClaimParams) ([]core.TaskInstance, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	if p.WorkerID == "" {
		return nil, fmt.Errorf("claim task instances: empty worker id: %w", core.ErrInvalid)
	}
	queues := p.Queues
	if len(queues) == 0 {
		queues = []string{core.DefaultQueue}
	}
	var started []core.TaskInstance
	if p.Reclaim && p.PID != 0 {
		b := builder{args: []any{p.WorkerID, p.Hostname, p.PID, p.Limit}}
		held := ""
		if len(p.Holding) > 0 {
			held = " AND id NOT IN (" + list(&b, p.Holding) + ")"
		}
		if p.DagRunID != 0 {
			held += fmt.Sprintf(qTIOfRun, b.arg(p.DagRunID))
		}
		var err error
		if started, err = s.queryTIs(ctx, s.writer(), "find the started, unheld tries of worker "+p.WorkerID,
			fmt.Sprintf(qTIStartedUnheld, held), b.args...); err != nil {
			return nil, err
		}
		if len(started) == p.Limit {
			if err := s.readRuns(ctx, started, p.Runs); err != nil {
				return nil, err
			}
			return started, nil
		}
	}
	b := builder{args: []any{p.WorkerID, micros(p.Now), p.Limit - len(started)}}
	start := ""
	if p.Start {
		b.args = append(b.args, p.Hostname, p.PID) // $4, $5
		start = qTIClaimStart
	}
	reclaim, first, ofRun := "", "", qNotOfTests
	if p.DagRunID != 0 {
		ofRun = fmt.Sprintf(qTIOfRun, b.arg(p.DagRunID))
	}
	if p.Reclaim {
		held := ""
		if len(p.Holding) > 0 {
			held = " AND id NOT IN (" + list(&b, p.Holding) + ")"
		}
		reclaim, first = fmt.Sprintf(qTIReclaim, held), "worker_id IS NULL, "
	}
	what := "claim task instances for worker " + p.WorkerID
	var tis []core.TaskInstance
	var err error
	if p.Runs != nil && s.d.ClaimJoinsRuns {
		tis, err = s.queryTIsWithRuns(ctx, what, fmt.Sprintf(qTIClaimWithRuns, reclaim, list(&b, queues), ofRun, first, s.d.ClaimLock, start), b.args, p.Runs)
	} else {
		tis, err = s.queryTIs(ctx, s.writer(), what, fmt.Sprintf(qTIClaim, reclaim, list(&b, queues), ofRun, first, s.d.ClaimLock, start), b.args...)
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(tis, func(i, j int) bool { return claimOrder(&tis[i], &tis[j]) })
	if p.Start && p.Started != nil && len(tis) > 0 {
		if err := p.Started(tis); err != nil {
			return nil, err
		}
	}
	tis = append(started, tis...)
	if err := s.readRuns(ctx, tis, p.Runs); err != nil {
		return nil, err
	}
	return tis, nil
}

// queryTIsWithRuns runs a query whose rows are a try's columns and then
// its run's (qTIClaimWithRuns), adding the runs to runs.
func (s *Store) queryTIsWithRuns(ctx context.Context, what, query string, args []any, runs map[int64]*core.DagRun) ([]core.TaskInstance, error) {
	rows, err := s.writer().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	tis, err := collect(rows, func(r *sql.Rows) (core.TaskInstance, error) {
		var run runRow
		ti, err := scanTI(withColumns{r, run.dest()})
		if err != nil {
			return core.TaskInstance{}, err
		}
		if _, ok := runs[run.run.ID]; !ok {
			runs[run.run.ID] = run.made()
		}
		return *ti, nil
	})
	return tis, s.wrap(err, "%s", what)
}

// readRuns adds to runs the run of each of tis it does not hold (nothing
// when runs is nil).
func (s *Store) readRuns(ctx context.Context, tis []core.TaskInstance, runs map[int64]*core.DagRun) error {
	if runs == nil {
		return nil
	}
	for i := range tis {
		id := tis[i].DagRunID
		if _, ok := runs[id]; ok {
			continue
		}
		run, err := s.DagRunGetByID(ctx, id)
		if err != nil {
			return err
		}
		runs[id] = run
	}
	return nil
}

// claimOrder is the order claims are handed out in (RETURNING has none).
func claimOrder(a, b *core.TaskInstance) bool {
	if a.PriorityWeight != b.PriorityWeight {
		return a.PriorityWeight > b.PriorityWeight
	}
	var qa, qb time.Time
	if a.QueuedAt != nil {
		qa = *a.QueuedAt
	}
	if b.QueuedAt != nil {
		qb = *b.QueuedAt
	}
	if !qa.Equal(qb) {
		return qa.Before(qb)
	}
	return a.ID < b.ID
}

// TaskInstanceStart moves a queued instance claimed by p.WorkerID to running.
func (s *Store) TaskInstanceStart(ctx context.Context, p *store.TaskInstanceStartParams) (*core.TaskInstance, error) {
	ti, err := scanTI(s.writer().QueryRowContext(ctx, qTIStart, p.ID, micros(p.Now), p.WorkerID, p.Hostname, p.PID))
	if err == nil {
		return ti, nil
	}
	what := fmt.Sprintf("start task instance %s for worker %s", p.ID, p.WorkerID)
	if err := s.wrap(err, "%s", what); !errors.Is(err, core.ErrNotFound) {
		return nil, err
	}
	cur, err := s.TaskInstanceGet(ctx, p.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return nil, fmt.Errorf("%s: it is %s (claimed by %q): %w", what, cur.State, cur.WorkerID, core.ErrConflict)
}

// TaskInstanceHeartbeat records that a running instance is alive.
func (s *Store) TaskInstanceHeartbeat(ctx context.Context, id string, at time.Time) error {
	return s.runningOnly(ctx, "heartbeat task instance "+id, id, qTIHeartbeat, id, micros(at))
}

// TaskInstanceTakeBack moves a failed-over try (up_for_retry) back to
// running when its worker heartbeats again before its retry began.
func (s *Store) TaskInstanceTakeBack(ctx context.Context, id string, at time.Time) error {
	return s.inStateOnly(ctx, "take back task instance "+id, id, core.TIUpForRetry, qTITakeBack, id, micros(at))
}

// TaskInstanceFinish moves a running instance (or one in p.From) to
// success, failed, skipped or up_for_retry.
func (s *Store) TaskInstanceFinish(ctx context.Context, p *store.TaskInstanceFinishParams) error {
	what, from, err := finishing(p)
	if err != nil {
		return err
	}
	if p.State == core.TISuccess && p.ClearTaskState {
		// docs/requirements.md#ts-4: the task state goes in the success transition's
		// transaction (a refused finish rolls the clear back).
		return s.inTx(ctx, func(tx *Store) error {
			if err := tx.clearTaskStateOfTry(ctx, p.ID); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			rest := *p
			rest.ClearTaskState = false
			return tx.TaskInstanceFinish(ctx, &rest)
		})
	}
	finish := func(s *Store) error {
		return s.inStateOnly(ctx, what, p.ID, from, qTIFinish, finishArgs(p, from)...)
	}
	if finishesAlone(p) {
		return finish(s) // nothing to record with the end
	}
	// Outlet events (declared outlets and the try's additions to alias
	// outlets) commit with the success transition, or not at all; any other
	// end drops the additions (docs/assets.md).
	return s.inTx(ctx, func(tx *Store) error {
		if err := finish(tx); err != nil {
			return err
		}
		return tx.finishOutletEvents(ctx, p)
	})
}

// finishing checks a finish's target state, and returns what it does (for
// errors) and the state it leaves.
func finishing(p *store.TaskInstanceFinishParams) (what string, from core.TIState, err error) {
	what = fmt.Sprintf("finish task instance %s as %s", p.ID, p.State)
	switch p.State {
	case core.TISuccess, core.TIFailed, core.TISkipped, core.TIUpForRetry:
		return what, cmp.Or(p.From, core.TIRunning), nil
	default:
		return what, "", fmt.Errorf("%s: a try can only finish as success, failed, skipped or up_for_retry: %w", what, core.ErrInvalid)
	}
}

// finishesAlone reports whether a finish is its one update: no task state
// to clear, no outlet events to record with it.
func finishesAlone(p *store.TaskInstanceFinishParams) bool {
	if p.State != core.TISuccess {
		return p.NoAliases
	}
	return !p.ClearTaskState && p.NoAliases && len(p.OutletEvents) == 0
}

// finishArgs are qTIFinish's arguments.
func finishArgs(p *store.TaskInstanceFinishParams, from core.TIState) []any {
	refund := 0
	if p.RefundTry && p.State == core.TIUpForRetry {
		refund = 1
	}
	return []any{p.ID, string(p.State), micros(p.Now), nullMicros(p.NextRetryAt), string(from), p.FailedOver && p.State == core.TIUpForRetry,
		heartbeatSeen(p.SeenHeartbeat), refund}
}

// heartbeatSeen is qTIFinish's $7: 0 for an end that any last heartbeat
// allows; else a bound no later heartbeat passes: the one seen, or 1 for
// none (COALESCE(last_heartbeat, 1): only a try that has still not beaten).
func heartbeatSeen(h *store.HeartbeatSeen) int64 {
	switch {
	case h == nil:
		return 0
	case h.At == nil:
		return 1
	}
	return micros(*h.At)
}

// TaskInstanceFinishLater is TaskInstanceFinish with its update deferred
// to the transaction's next statement (sqlstore.DeferredCounted): on
// PostgreSQL a try's end and the reads of its follow-on are one round
// trip. A finish that does more than its update, or one outside a
// transaction, runs at once.
func (s *Store) TaskInstanceFinishLater(ctx context.Context, p *store.TaskInstanceFinishParams) (check func() error, err error) {
	what, from, err := finishing(p)
	if err != nil {
		return nil, err
	}
	if s.tx == nil || !finishesAlone(p) {
		err := s.TaskInstanceFinish(ctx, p)
		return func() error { return err }, err
	}
	rows, err := s.execCounted(ctx, qTIFinish, finishArgs(p, from)...) // 1, or 0 when the try is not in state from
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	var (
		checked bool
		outcome error
	)
	return func() error {
		if !checked {
			checked = true
			if n, err := rows(); err != nil {
				outcome = s.wrap(err, "%s", what)
			} else if n == 0 {
				outcome = s.stateConflict(ctx, what, p.ID, from)
			}
		}
		return outcome
	}, nil
}

// runningOnly runs an update conditioned on state running; when no row
// changed it reports ErrNotFound or ErrConflict with the current state.
func (s *Store) runningOnly(ctx context.Context, what, id, query string, args ...any) error {
	return s.inStateOnly(ctx, what, id, core.TIRunning, query, args...)
}

// inStateOnly runs an update conditioned on state want; when no row
// changed it reports ErrNotFound or ErrConflict with the current state.
func (s *Store) inStateOnly(ctx context.Context, what, id string, want core.TIState, query string, args ...any) error {
	err := s.execOne(ctx, what, query, args...)
	if !errors.Is(err, core.ErrNotFound) {
		return err
	}
	return s.stateConflict(ctx, what, id, want)
}

// stateConflict is the error of an update conditioned on state want that
// changed no row: ErrNotFound, or ErrConflict with the current state.
func (s *Store) stateConflict(ctx context.Context, what, id string, want core.TIState) error {
	cur, err := s.TaskInstanceGet(ctx, id)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if cur.State == want && want == core.TIRunning { // the update also asked for the heartbeat it saw
		return fmt.Errorf("%s: its worker's heartbeat came after the check read it: %w", what, core.ErrConflict)
	}
	if cur.State == want { // the update also asked for a try failed over
		return fmt.Errorf("%s: it is %s, but its worker reported it so (it was not failed over for missed heartbeats): %w",
			what, cur.State, core.ErrConflict)
	}
	return fmt.Errorf("%s: it is %s, not %s: %w", what, cur.State, want, core.ErrConflict)
}

// TaskInstanceStale lists running instances whose last heartbeat (or start)
// is older than before, and queued instances claimed before it.
func (s *Store) TaskInstanceStale(ctx context.Context, before time.Time) ([]core.TaskInstance, error) {
	return s.queryTIs(ctx, s.reader(), "list stale task instances", qTIStale, micros(before))
}

// TaskInstanceStaleOfWorker is TaskInstanceStale for the tries of one
// worker (by name).
func (s *Store) TaskInstanceStaleOfWorker(ctx context.Context, workerID string, before time.Time) ([]core.TaskInstance, error) {
	return s.queryTIs(ctx, s.reader(), "list stale task instances of worker "+workerID, qTIStaleOfWorker, micros(before), workerID)
}

// TaskInstanceActiveCounts counts queued and running instances per pool
// (slots), DAG and run.
func (s *Store) TaskInstanceActiveCounts(ctx context.Context) (*store.ActiveCounts, error) {
	rows, err := s.reader().QueryContext(ctx, qTIActive)
	if err != nil {
		return nil, s.wrap(err, "count active task instances")
	}
	_, counts, _, err := scanActive(rows, false)
	return counts, s.wrap(err, "count active task instances")
}

// QueueingReads reads the active counts (the pools too, with withPools)
// and the first page of the scheduled instances first lists, in one
// statement: each side's rows joined to none of the other's.
func (s *Store) QueueingReads(ctx context.Context, withPools bool, first *store.TaskInstanceListParams) ([]core.Pool, *store.ActiveCounts, []core.TaskInstance, error) {
	counts := qTIActive
	if withPools {
		counts = qPoolsInUse
	}
	b := tiFilter(first)
	order := tiPriorityOrder.def // TaskInstanceList's, which reads the pages after this one
	page := fmt.Sprintf(qTIList, b.clause(), " ORDER BY "+order, b.page(first.Limit, first.Offset))
	outer := "t." + strings.ReplaceAll(order, ", ", ", t.")
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qQueueingReads, counts, page, outer), b.args...)
	if err != nil {
		return nil, nil, nil, s.wrap(err, "read the slots in use and the scheduled task instances")
	}
	pools, out, tis, err := scanActive(rows, true)
	return pools, out, tis, s.wrap(err, "read the slots in use and the scheduled task instances")
}

// tiColumns is how many columns tiCols names.
var tiColumns = strings.Count(tiCols, ",") + 1

// scanActive reads the rows of qTIActive, qPoolsInUse, or with scheduled
// qQueueingReads: a pool's row (run -1), an active count's, or (its
// first columns NULL) a scheduled instance's.
func scanActive(rows *sql.Rows, scheduled bool) ([]core.Pool, *store.ActiveCounts, []core.TaskInstance, error) {
	defer func() { _ = rows.Close() }()
	var (
		pools                    []core.Pool
		tis                      []core.TaskInstance
		out                      = &store.ActiveCounts{PoolSlots: map[string]int{}, ByDag: map[string]int{}, ByRun: map[int64]int{}, Claimable: map[string]int{}}
		pool, dag, queue         sql.NullString
		run, slots, n, claimable sql.NullInt64
		head                     = []any{&pool, &dag, &run, &queue, &slots, &n, &claimable}
		dest                     = head
	)
	if scheduled { // the instance's columns are scanned again, as one, when they are not NULL
		for range tiColumns {
			dest = append(dest, new(any))
		}
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, nil, err
		}
		switch {
		case !run.Valid: // a scheduled instance's row
			ti, err := scanTI(afterColumns{rows, head})
			if err != nil {
				return nil, nil, nil, err
			}
			tis = append(tis, *ti)
		case run.Int64 == -1: // a pool's row
			pools = append(pools, core.Pool{Name: pool.String, Slots: int(slots.Int64), Description: dag.String})
		default:
			out.PoolSlots[pool.String] += int(slots.Int64)
			out.ByDag[dag.String] += int(n.Int64)
			out.ByRun[run.Int64] += int(n.Int64)
			if claimable.Int64 > 0 {
				out.Claimable[queue.String] += int(claimable.Int64)
			}
		}
	}
	return pools, out, tis, rows.Err()
}

// afterColumns scans a row's columns after the first ones, which go to
// skip.
type afterColumns struct {
	r    scanner
	skip []any
}

func (a afterColumns) Scan(dest ...any) error {
	return a.r.Scan(append(slices.Clone(a.skip), dest...)...)
}
