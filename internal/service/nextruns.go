package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/schedule"
)

// NextDataIntervals returns up to n data intervals of a DAG's next
// scheduled runs after its latest scheduled run, by its latest version's
// schedule, start and end dates and catchup (Airflow's `dags
// next-execution`); none for a DAG without a schedule or past its end.
// A run's logical date is its interval's Start. Errors wrap
// core.ErrNotFound for an unknown DAG and core.ErrInvalid for n < 1.
func (s *Service) NextDataIntervals(ctx context.Context, dagID string, n int) ([]schedule.Interval, error) {
	if n < 1 {
		return nil, fmt.Errorf("number of runs %d: must be at least 1: %w", n, core.ErrInvalid)
	}
	v, err := s.st.DagVersionLatest(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	return s.NextDataIntervalsOf(ctx, &v.Spec, n)
}

// NextDataIntervalsOf is NextDataIntervals by spec, the DAG's latest
// version the caller holds already (n is at least 1).
func (s *Service) NextDataIntervalsOf(ctx context.Context, spec *core.DAG, n int) ([]schedule.Interval, error) {
	dagID := spec.DagID
	tt, err := schedule.Of(spec)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q schedule %q: %w", dagID, spec.Schedule, err)
	}
	var last *schedule.Interval
	switch prev, err := s.st.DagRunLatestScheduled(ctx, dagID); {
	case errors.Is(err, core.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("dag_id %q: latest scheduled run: %w", dagID, err)
	default:
		last = schedule.RunInterval(prev)
	}
	out := []schedule.Interval{}
	catchup := spec.Catchup
	for len(out) < n {
		iv, ok := tt.Next(last, spec.StartDate, spec.EndDate, catchup, s.clock.Now())
		if ok && last != nil && iv.Start.Equal(last.Start) && iv.End.After(last.End) {
			// A timetable switched back to data intervals: the interval
			// starting at the last run's logical date is skipped (its run
			// id is taken, docs/dag-files.md#schedules), as the scheduler does.
			last, catchup = &iv, true
			continue
		}
		if !ok || (last != nil && !iv.Start.After(last.Start)) {
			break
		}
		out = append(out, iv)
		last, catchup = &iv, true // the ones after it follow on
	}
	return out, nil
}
