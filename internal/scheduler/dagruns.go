package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/schedule"
	"github.com/weirflow/weir/internal/store"
)

// createScheduledRuns creates the due scheduled runs of every active,
// unpaused DAG with a schedule, within its max_active_runs (counting queued
// and running runs) and at most MaxRunsToCreatePerLoop in all, and records
// each DAG's next_run_after.
//
// The scheduler owns dag.next_run_after: nil means "not computed yet" (a new
// DAG, or the dag processor reset it after a schedule change) and is
// computed here; a DAG whose timetable has no further run is remembered in
// memory per version so it is not recomputed every pass.
func (s *Scheduler) createScheduledRuns(ctx context.Context, dags []core.DagModel, now time.Time, res *passResult) error {
	budget := s.Config.MaxRunsToCreatePerLoop
	for i := range dags {
		d := &dags[i]
		if d.IsPaused || d.LatestVersion == 0 {
			continue
		}
		if d.NextRunAfter != nil && d.NextRunAfter.After(now) {
			res.earliest(*d.NextRunAfter)
			continue
		}
		s.mu.Lock()
		done := d.NextRunAfter == nil && s.exhausted[d.DagID] == d.LatestVersion
		s.mu.Unlock()
		if done {
			continue
		}
		if budget == 0 {
			res.again = true
			return nil
		}
		created, err := s.createRunsFor(ctx, d, now, budget, res)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Logger.Error("create scheduled runs", "dag_id", d.DagID, "err", err)
		}
		budget -= created
	}
	return nil
}

// createRunsFor creates up to budget due runs of one DAG and returns how
// many it created.
func (s *Scheduler) createRunsFor(ctx context.Context, d *core.DagModel, now time.Time, budget int, res *passResult) (int, error) {
	g, err := s.graph(ctx, d.LatestVersion)
	if err != nil {
		return 0, err
	}
	spec := g.spec
	tt, err := schedule.Of(spec)
	if err != nil || spec.Schedule == "" {
		s.markExhausted(d)
		if err != nil {
			return 0, fmt.Errorf("dag %q schedule %q: %w", d.DagID, spec.Schedule, err)
		}
		return 0, nil
	}
	// A backfill's runs count against the backfill's max_active_runs,
	// not the DAG's (as in Airflow 3).
	active, err := s.Store.DagRunCount(ctx, &store.DagRunListParams{DagID: d.DagID,
		States: []core.DagRunState{core.RunQueued, core.RunRunning}, RunTypes: notBackfill})
	if err != nil {
		return 0, fmt.Errorf("dag %q: count runs: %w", d.DagID, err)
	}
	maxActive := orDefault(spec.MaxActiveRuns, DefaultMaxActiveRuns)
	var last *schedule.Interval
	switch prev, err := s.Store.DagRunLatestScheduled(ctx, d.DagID); {
	case errors.Is(err, core.ErrNotFound):
	case err != nil:
		return 0, fmt.Errorf("dag %q: latest scheduled run: %w", d.DagID, err)
	default:
		last = intervalOf(prev)
	}
	created := 0
	for {
		iv, ok := tt.Next(last, spec.StartDate, spec.EndDate, spec.Catchup, now)
		if !ok {
			s.markExhausted(d)
			return created, s.setNextRunAfter(ctx, d, nil)
		}
		if !DecideTriggers(spec, !iv.End.After(now), false).Scheduled {
			res.earliest(iv.End)
			return created, s.setNextRunAfter(ctx, d, &iv.End)
		}
		if active >= maxActive || created == budget {
			// Due but blocked: keep next_run_after due; a finishing run
			// (or the next pass) brings us back.
			if created == budget {
				res.again = true
			}
			return created, s.setNextRunAfter(ctx, d, &iv.End)
		}
		if err := s.createRun(ctx, d, spec, iv, now); err != nil {
			return created, err
		}
		active++
		created++
		last = &iv
	}
}

// createRun inserts one scheduled run; a run another scheduler created
// first is not an error.
func (s *Scheduler) createRun(ctx context.Context, d *core.DagModel, spec *core.DAG, iv schedule.Interval, now time.Time) error {
	start, end := iv.Start.UTC(), iv.End.UTC()
	runID := runs.RunID(core.RunScheduled, start)
	_, err := s.Store.DagRunCreate(ctx, &store.DagRunCreateParams{
		DagID:             d.DagID,
		RunID:             runID,
		RunType:           core.RunScheduled,
		State:             core.RunQueued,
		LogicalDate:       &start,
		DataIntervalStart: &start,
		DataIntervalEnd:   &end,
		Conf:              []byte(`{}`),
		DagVersionID:      d.LatestVersion,
		Now:               now,
		TaskInstances:     runs.NewTaskInstances(spec),
	})
	switch {
	case errors.Is(err, core.ErrConflict):
		return nil
	case err != nil:
		return fmt.Errorf("dag %q: create run %q: %w", d.DagID, runID, err)
	}
	s.tally.runsCreated++
	s.Logger.Info("created scheduled dag run", "dag_id", d.DagID, "run_id", runID)
	return nil
}

func (s *Scheduler) setNextRunAfter(ctx context.Context, d *core.DagModel, at *time.Time) error {
	if (at == nil && d.NextRunAfter == nil) || (at != nil && d.NextRunAfter != nil && at.Equal(*d.NextRunAfter)) {
		return nil
	}
	if err := s.Store.DagSetNextRunAfter(ctx, d.DagID, at); err != nil {
		return fmt.Errorf("dag %q: set next run after: %w", d.DagID, err)
	}
	return nil
}

func (s *Scheduler) markExhausted(d *core.DagModel) {
	s.mu.Lock()
	s.exhausted[d.DagID] = d.LatestVersion
	s.mu.Unlock()
}

// intervalOf returns a run's data interval (its logical date when unset).
func intervalOf(r *core.DagRun) *schedule.Interval { return schedule.RunInterval(r) }

// startQueuedRuns moves queued runs of unpaused DAGs to running, oldest
// first, while the DAG has fewer than max_active_runs running runs, and
// returns every running run.
func (s *Scheduler) startQueuedRuns(ctx context.Context, paused held, now time.Time) ([]core.DagRun, error) {
	running, err := s.Store.DagRunList(ctx, &store.DagRunListParams{States: []core.DagRunState{core.RunRunning}})
	if err != nil {
		return nil, fmt.Errorf("list running dag runs: %w", err)
	}
	queued, err := s.Store.DagRunList(ctx, &store.DagRunListParams{States: []core.DagRunState{core.RunQueued}})
	if err != nil {
		return nil, fmt.Errorf("list queued dag runs: %w", err)
	}
	backfills, err := s.activeBackfills(ctx)
	if err != nil {
		return nil, err
	}
	active := map[string]int{}
	for _, r := range running {
		active[limitKey(&r)]++
	}
	for i := len(queued) - 1; i >= 0; i-- { // the list is newest first
		r := queued[i]
		if paused.holds(r.DagID) {
			continue
		}
		limit, err := s.runLimit(ctx, &r, backfills)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.Logger.Error("start dag run", "dag_id", r.DagID, "run_id", r.RunID, "err", err)
			continue
		}
		if active[limitKey(&r)] >= limit {
			continue
		}
		ok, err := s.Store.DagRunSetState(ctx, &store.DagRunSetStateParams{
			ID: r.ID, From: []core.DagRunState{core.RunQueued}, To: core.RunRunning, Now: now,
		})
		if err != nil {
			return nil, fmt.Errorf("start dag %q run %q: %w", r.DagID, r.RunID, err)
		}
		if ok {
			active[limitKey(&r)]++
			r.State = core.RunRunning
			running = append(running, r)
		}
	}
	return running, nil
}

// notBackfill is every run type but backfill: the runs a DAG's own
// max_active_runs bounds.
var notBackfill = []core.RunType{core.RunManual, core.RunScheduled, core.RunAssetTriggered}

// activeBackfills returns the backfills not completed yet, by id.
func (s *Scheduler) activeBackfills(ctx context.Context) (map[int64]*core.Backfill, error) {
	list, err := s.Store.BackfillList(ctx, &store.BackfillListParams{OnlyActive: true})
	if err != nil {
		return nil, fmt.Errorf("list active backfills: %w", err)
	}
	out := make(map[int64]*core.Backfill, len(list))
	for i := range list {
		out[list[i].ID] = &list[i]
	}
	return out, nil
}

// limitKey names the limit a run counts against: its backfill's
// max_active_runs, or its DAG's.
func limitKey(r *core.DagRun) string {
	if r.BackfillID != nil {
		return fmt.Sprintf("backfill %d", *r.BackfillID)
	}
	return "dag " + r.DagID
}

// runLimit returns how many runs may be active under r's limit: its
// backfill's max_active_runs (0 while the backfill is paused or done), or
// its DAG's.
func (s *Scheduler) runLimit(ctx context.Context, r *core.DagRun, backfills map[int64]*core.Backfill) (int, error) {
	if r.BackfillID != nil {
		b, ok := backfills[*r.BackfillID]
		if !ok || b.IsPaused {
			return 0, nil
		}
		return b.MaxActiveRuns, nil
	}
	g, err := s.graph(ctx, r.DagVersionID)
	if err != nil {
		return 0, err
	}
	return orDefault(g.spec.MaxActiveRuns, DefaultMaxActiveRuns), nil
}
