package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

// PreviousSuccessfulRun returns the successful run of ti's DAG with the
// greatest logical date before ti's run's (Airflow's previous successful
// dag run, which its prev_*_success template names read), or nil when
// there is none or ti's run has no logical date.
func (s *Service) PreviousSuccessfulRun(ctx context.Context, ti *core.TaskInstance) (*core.DagRun, error) {
	run, err := s.st.DagRunGet(ctx, ti.DagID, ti.RunID)
	if err != nil {
		return nil, fmt.Errorf("run of %s: %w", runs.Describe(ti), err)
	}
	if run.LogicalDate == nil {
		return nil, nil
	}
	prev, err := s.st.DagRunPreviousSuccess(ctx, ti.DagID, *run.LogicalDate)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	return prev, err
}
