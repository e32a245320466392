package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

// Layout of the cleanup data set: 1,000 rows per run (100 tasks × 10 keys),
// expires_at spread evenly over the 30 days before the benchmark, written
// 30 days before they expire (the default retention); plus rows/10 rows
// cleanup must keep (half never-expire, half expiring tomorrow).
const (
	rowsPerRun = 1000
	day        = 24 * time.Hour
)

// The seed statements generate the rows in the database. Expired: $1 =
// rows, $2 = first expires_at (µs), $3 = step (µs); kept: $1 = rows, $2 =
// now (µs).
const (
	seedCols = `INSERT INTO task_state_store (dag_run_id, dag_id, run_id, task_id, map_index, key, value, updated_at,
		updated_by_run, updated_by_try, expires_at, never_expire) `
	seedExpiredSelect = `SELECT d.id, d.dag_id, d.run_id, 't' || ((x/10)%100), -1, 'k' || (x%10),
		'{"pages_done":' || x || ',"of":10000,"status":"running"}',
		CAST($2 AS BIGINT) + x*CAST($3 AS BIGINT) - 2592000000000, d.run_id, 1, CAST($2 AS BIGINT) + x*CAST($3 AS BIGINT), FALSE
		FROM {series} JOIN dag_run d ON d.dag_id = 'bench_state' AND d.run_id = 'r' || (x/1000)`
	seedKeptSelect = `SELECT d.id, d.dag_id, d.run_id, 'u' || ((x/10)%10), -1, 'k' || (x%10), '{"kept":true}',
		CAST($2 AS BIGINT), d.run_id, 1, CASE WHEN x%2 = 0 THEN NULL ELSE CAST($2 AS BIGINT) + 86400000000 END, x%2 = 0
		FROM {series} JOIN dag_run d ON d.dag_id = 'bench_state' AND d.run_id = 'r' || (x/100)`
	sqliteSeries   = `WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM s WHERE x < $1 - 1) `
	postgresSeries = `generate_series(0, CAST($1 AS INTEGER) - 1) AS s(x)`
)

// seed creates the runs and bulk-inserts the rows; it returns how many
// rows must survive cleanup.
func (e *env) seed(ctx context.Context, rows int) (kept int, err error) {
	for r := range (rows + rowsPerRun - 1) / rowsPerRun {
		if err := e.createRun(ctx, "r"+strconv.Itoa(r), 0); err != nil {
			return 0, err
		}
	}
	now := time.Now()
	first := now.Add(-30 * day)
	step := (29*day + 23*time.Hour) / time.Duration(rows) // the last row expired an hour ago
	kept = rows / 10
	db := e.st.DB()
	args := []any{rows, first.UnixMicro(), step.Microseconds()}
	var qExp, qKept string
	if e.o.engine == "postgres" {
		qExp = seedCols + strings.ReplaceAll(seedExpiredSelect, "{series}", postgresSeries)
		qKept = seedCols + strings.ReplaceAll(seedKeptSelect, "{series}", postgresSeries)
	} else {
		qExp = sqliteSeries + seedCols + strings.ReplaceAll(seedExpiredSelect, "{series}", "s")
		qKept = sqliteSeries + seedCols + strings.ReplaceAll(seedKeptSelect, "{series}", "s")
	}
	if _, err := db.ExecContext(ctx, qExp, args...); err != nil {
		return 0, fmt.Errorf("seed expired rows: %w", err)
	}
	if _, err := db.ExecContext(ctx, qKept, kept, now.UnixMicro()); err != nil {
		return 0, fmt.Errorf("seed kept rows: %w", err)
	}
	if e.o.engine == "postgres" { // as autovacuum would have after such a load
		if _, err := db.ExecContext(ctx, "VACUUM ANALYZE task_state_store"); err != nil {
			return 0, err
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM task_state_store").Scan(&n); err != nil {
		return 0, err
	}
	if n != rows+kept {
		return 0, fmt.Errorf("seeded %d rows, want %d", n, rows+kept)
	}
	return kept, nil
}

// timedStore times each cleanup statement (one batch, one commit).
type timedStore struct {
	store.Store
	batches []time.Duration
}

func (t *timedStore) StateDeleteStale(ctx context.Context, p *store.StateStaleParams) (int64, error) {
	t0 := time.Now()
	n, err := t.Store.StateDeleteStale(ctx, p)
	t.batches = append(t.batches, time.Since(t0))
	return n, err
}

// sample is one writer request.
type sample struct {
	start time.Time
	lat   time.Duration
	err   error
}

type cleanupResult struct {
	batch                int
	deleted              int64
	batches              int
	total, longest       time.Duration
	writerN, writerErrs  int
	writerMax, writerP99 time.Duration
	writerBaseMax        time.Duration
	firstErr             error
}

func (r cleanupResult) String() string {
	s := fmt.Sprintf("batch=%d deleted=%d batches=%d total=%.2fs rows/s=%.0f longest_batch=%.1fms | writer during cleanup: sets=%d max=%.1fms p99=%.1fms errors=%d (before cleanup max=%.1fms)",
		r.batch, r.deleted, r.batches, r.total.Seconds(), float64(r.deleted)/r.total.Seconds(), ms(r.longest),
		r.writerN, ms(r.writerMax), ms(r.writerP99), r.writerErrs, ms(r.writerBaseMax))
	if r.firstErr != nil {
		s += fmt.Sprintf(" first error: %v", r.firstErr)
	}
	return s
}

// cleanupScenario runs a cleanup of -rows expired rows for each batch size.
func cleanupScenario(ctx context.Context, o *options) error {
	res := map[int][]cleanupResult{}
	for rep := range o.reps {
		for _, batch := range o.batches {
			r, err := cleanupOnce(ctx, o, batch, fmt.Sprintf("c%d_%d", rep, batch))
			if err != nil {
				return err
			}
			fmt.Printf("rep %d: %s cleanup %s load=%s\n", rep+1, o.engine, r, loadAvg())
			res[batch] = append(res[batch], r)
		}
	}
	for _, batch := range o.batches {
		rs := res[batch]
		f := func(g func(cleanupResult) time.Duration) float64 {
			return med(rs, func(r cleanupResult) float64 { return ms(g(r)) })
		}
		fmt.Printf("MEDIAN %s cleanup batch=%d: total=%.2fs rows/s=%.0f batches=%.0f longest_batch=%.1fms writer_max=%.1fms writer_p99=%.1fms writer_errors=%.0f\n",
			o.engine, batch, f(func(r cleanupResult) time.Duration { return r.total })/1000,
			med(rs, func(r cleanupResult) float64 { return float64(r.deleted) / r.total.Seconds() }),
			med(rs, func(r cleanupResult) float64 { return float64(r.batches) }),
			f(func(r cleanupResult) time.Duration { return r.longest }), f(func(r cleanupResult) time.Duration { return r.writerMax }),
			f(func(r cleanupResult) time.Duration { return r.writerP99 }),
			med(rs, func(r cleanupResult) float64 { return float64(r.writerErrs) }))
	}
	return nil
}

func cleanupOnce(ctx context.Context, o *options, batch int, name string) (cleanupResult, error) {
	res := cleanupResult{batch: batch}
	e, err := newEnv(ctx, o, name, 1)
	if err != nil {
		return res, err
	}
	defer e.close()
	kept, err := e.seed(ctx, o.rows)
	if err != nil {
		return res, err
	}
	if err := e.createRun(ctx, "live", 1); err != nil {
		return res, err
	}
	if err := e.start(ctx); err != nil {
		return res, err
	}
	clients, err := e.runTries(ctx, 1)
	if err != nil {
		return res, err
	}

	// One writer sets task state back to back for the whole cleanup.
	var (
		mu      sync.Mutex
		samples []sample
		done    = make(chan struct{})
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			default:
			}
			t0 := time.Now()
			err := clients[0].StateSet(ctx, taskScope, "k"+strconv.Itoa(n%10), value(n), "")
			mu.Lock()
			samples = append(samples, sample{start: t0, lat: time.Since(t0), err: err})
			mu.Unlock()
		}
	}()
	time.Sleep(time.Second) // baseline

	ts := &timedStore{Store: e.st}
	svc := statestore.New(ts, core.SystemClock{}, statestore.Config{DefaultRetentionDays: statestore.DefaultRetentionDays, CleanupBatchSize: batch})
	t0 := time.Now()
	rep, err := svc.Cleanup(ctx, false)
	t1 := time.Now()
	time.Sleep(500 * time.Millisecond)
	close(done)
	wg.Wait()
	if err != nil {
		return res, fmt.Errorf("cleanup: %w", err)
	}
	res.deleted, res.batches, res.total = rep.Deleted, rep.Batches, t1.Sub(t0)
	for _, b := range ts.batches {
		res.longest = max(res.longest, b)
	}
	var during []time.Duration
	for _, s := range samples {
		end := s.start.Add(s.lat)
		switch {
		case end.Before(t0):
			res.writerBaseMax = max(res.writerBaseMax, s.lat)
		case s.start.After(t1):
		case s.err != nil:
			res.writerErrs++
			if res.firstErr == nil {
				res.firstErr = s.err
			}
		default:
			during = append(during, s.lat)
		}
	}
	st := summarize(during, 0, 0)
	res.writerN, res.writerMax, res.writerP99 = st.ops, st.max, st.p99
	if res.writerErrs > 0 {
		res.writerMax = max(res.writerMax, maxErrLatency(samples, t0, t1))
	}
	if res.deleted != int64(o.rows) {
		return res, fmt.Errorf("cleanup deleted %d rows, want %d", res.deleted, o.rows)
	}
	var left int
	if err := e.st.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM task_state_store WHERE run_id <> 'live'").Scan(&left); err != nil {
		return res, err
	}
	if left != kept {
		return res, fmt.Errorf("%d rows left after cleanup, want the %d unexpired and never-expire rows", left, kept)
	}
	return res, nil
}

// maxErrLatency is the longest failed request during the cleanup (a
// request that waited for the lock until it gave up blocked the writer too).
func maxErrLatency(samples []sample, t0, t1 time.Time) time.Duration {
	var m time.Duration
	for _, s := range samples {
		if s.err != nil && !s.start.After(t1) && !s.start.Add(s.lat).Before(t0) {
			m = max(m, s.lat)
		}
	}
	return m
}
