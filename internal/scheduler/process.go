package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// processRun decides and applies one running run's plan: trigger-rule
// outcomes in batches, due retries, mapped expansions, and the run's final
// state once every instance is terminal.
func (s *Scheduler) processRun(ctx context.Context, run *core.DagRun, now time.Time, res *passResult) error {
	g, err := s.graph(ctx, run.DagVersionID)
	if err != nil {
		return err
	}
	if idle, err := s.runIdle(ctx, run); err != nil || idle {
		return err
	}
	tis, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		return fmt.Errorf("list task instances: %w", err)
	}
	plan := g.decide(tis, now)
	if plan.NextRetryAt != nil {
		res.earliest(*plan.NextRetryAt)
	}
	complete := true // every change of the plan landed
	for _, step := range []struct {
		ids []string
		to  core.TIState
	}{
		{plan.Schedule, core.TIScheduled},
		{plan.Skip, core.TISkipped},
		{plan.UpstreamFailed, core.TIUpstreamFailed},
		{plan.Remove, core.TIRemoved},
	} {
		if len(step.ids) == 0 {
			continue
		}
		moved, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
			IDs: step.ids, From: []core.TIState{core.TINone}, To: step.to, Now: now,
		})
		if err != nil {
			return fmt.Errorf("set %d task instances %s: %w", len(step.ids), step.to, err)
		}
		complete = complete && len(moved) == len(step.ids)
	}
	for i := range plan.Retry {
		ti := &plan.Retry[i]
		err := s.Store.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{
			ID: ti.ID, NewID: uuid.NewString(), To: core.TIScheduled, Now: now,
		})
		if err != nil && !benign(err) {
			return fmt.Errorf("retry %s: %w", runs.Describe(ti), err)
		}
	}
	for i := range plan.Expand {
		if err := s.expand(ctx, run, g, &plan.Expand[i], now); err != nil {
			return err
		}
	}
	// Decide already propagated this plan's skips and failures downstream;
	// an expansion's outcome (skipped, failed) needs another look.
	if len(plan.Expand) > 0 {
		res.again = true
	}
	if plan.RunState == "" || !complete {
		return nil
	}
	ok, err := s.Store.DagRunSetState(ctx, &store.DagRunSetStateParams{
		ID: run.ID, From: []core.DagRunState{core.RunRunning}, To: plan.RunState, Now: now,
	})
	if err != nil {
		return fmt.Errorf("finish run as %s: %w", plan.RunState, err)
	}
	if ok {
		s.Logger.Info("dag run finished", "dag_id", run.DagID, "run_id", run.RunID, "state", plan.RunState)
		res.again = true // a slot for queued or scheduled runs opened
	}
	return nil
}

// pendingStates are the states Decide acts on: a none-state instance may be
// scheduled, skipped, failed upstream, removed or expanded, and an
// up_for_retry one may get its next try.
var pendingStates = []core.TIState{core.TINone, core.TIUpForRetry}

// activeStates are the non-terminal states other than pendingStates.
var activeStates = []core.TIState{core.TIScheduled, core.TIQueued, core.TIRunning, core.TIRestarting, core.TIDeferred}

// runIdle reports whether Decide has nothing to do for run: no instance is
// pending and some are still active, so every instance keeps its state and
// the run goes on. Decide then yields an empty plan (its only other output,
// the run's final state, needs every instance terminal), and the full load
// of the run's instances, which costs in proportion to the run's size on
// every pass, is skipped. Two small queries replace it: the first returns
// at most one row and the second at most one.
func (s *Scheduler) runIdle(ctx context.Context, run *core.DagRun) (bool, error) {
	pending, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, States: pendingStates, Limit: 1})
	if err != nil {
		return false, fmt.Errorf("look for pending task instances: %w", err)
	}
	if len(pending) > 0 {
		return false, nil
	}
	active, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, States: activeStates, Limit: 1})
	if err != nil {
		return false, fmt.Errorf("look for active task instances: %w", err)
	}
	return len(active) > 0, nil
}
