package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// processRun decides and applies one running run's plan: trigger-rule
// outcomes in batches, due retries, mapped expansions, and the run's final
// state once every instance is terminal. It decides from the run's view
// (runview.go), read incrementally; whatever does not go as planned drops
// the view, so the next pass starts from a full load.
func (s *Scheduler) processRun(ctx context.Context, run *core.DagRun, now time.Time, res *passResult) (err error) {
	defer func() {
		if err != nil {
			delete(s.views, run.ID)
		}
	}()
	g, err := s.graph(ctx, run.DagVersionID)
	if err != nil {
		return err
	}
	// A view without pending instances is not trusted to say the run is
	// idle: the database says so exactly (and a finished run is decided
	// from a full load).
	if v := s.views[run.ID]; v == nil || !v.pending() {
		switch act, err := s.runActivity(ctx, run); {
		case err != nil:
			return err
		case act == runIdle:
			return nil
		case act == runDone:
			delete(s.views, run.ID)
		}
	}
	plan, err := s.plan(ctx, run, g, now)
	if err != nil {
		return err
	}
	if v := s.views[run.ID]; v != nil && v.pending() {
		// The run waits on what the view says; a change its incremental
		// reads missed is found by a full load no later than this.
		res.earliest(v.loaded.Add(fullReloadAfter))
	}
	complete, err := s.apply(ctx, run, g, &plan, now, res)
	if err != nil {
		return err
	}
	if !complete || len(plan.Expand) > 0 || len(plan.Iterate) > 0 {
		delete(s.views, run.ID) // reload rather than infer what landed
	}
	if plan.RunState == "" || !complete {
		return nil
	}
	delete(s.views, run.ID)
	// The DAG's callbacks for the run's end are fired in the transaction
	// that ends it (ADR 0015).
	ok, err := s.Service.FinishRun(ctx, run, g.spec, plan.RunState, now)
	if err != nil {
		return err
	}
	if ok {
		if s.OnRunFinished != nil {
			s.OnRunFinished(run, plan.RunState, now)
		}
		s.Logger.Info("dag run finished", "dag_id", run.DagID, "run_id", run.RunID, "state", plan.RunState)
		res.again, res.full = true, true // a slot for queued or scheduled runs opened
	}
	return nil
}

// plan decides run from its view. A plan decided from an incrementally
// read view that would change something is confirmed against the database
// first; when it is not (or it would finish the run), the run is decided
// again from a full load.
func (s *Scheduler) plan(ctx context.Context, run *core.DagRun, g *graph, now time.Time) (Plan, error) {
	v, fresh, err := s.view(ctx, run, g, now)
	if err != nil {
		return Plan{}, err
	}
	// Stream heads are read after the instances: an item counted here
	// has no instance the view misses, except one another scheduler just
	// created (its step then fails harmlessly).
	streams, err := s.streamHeads(ctx, run, g, v.tis)
	if err != nil {
		return Plan{}, err
	}
	if err := s.closeHandled(ctx, run, g, v.tis); err != nil {
		return Plan{}, err
	}
	plan := g.decide(v.tis, streams, now)
	if fresh || plan.empty() {
		return plan, nil
	}
	if ok, err := s.confirm(ctx, run, g, v, &plan); err != nil || ok {
		return plan, err
	}
	if v, err = s.loadView(ctx, run, now); err != nil {
		return Plan{}, err
	}
	return g.decide(v.tis, streams, now), nil
}

// apply makes plan's changes and reports whether every one landed.
func (s *Scheduler) apply(ctx context.Context, run *core.DagRun, g *graph, plan *Plan, now time.Time, res *passResult) (bool, error) {
	if plan.NextRetryAt != nil {
		res.earliest(*plan.NextRetryAt)
	}
	complete := true // every change of the plan landed
	// Lazy expansions first: a placeholder this plan also fails (its
	// producer failed mid-stream) gets its items' instances before.
	for i := range plan.Iterate {
		step := &plan.Iterate[i]
		ok, err := s.iterate(ctx, run, g, step, now, res)
		if err != nil {
			return false, err
		}
		if !ok { // not every item has its instance yet: fail it later
			plan.UpstreamFailed = slices.DeleteFunc(plan.UpstreamFailed, func(id string) bool { return id == step.Placeholder.ID })
		}
		complete = complete && ok
	}
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
			return false, fmt.Errorf("set %d task instances %s: %w", len(step.ids), step.to, err)
		}
		complete = complete && len(moved) == len(step.ids)
	}
	for i := range plan.StartDeferred {
		ti := &plan.StartDeferred[i]
		err := s.startFromTrigger(ctx, run, g, ti)
		if err != nil && !benign(err) {
			return false, err
		}
		complete = complete && err == nil
	}
	for i := range plan.Retry {
		ti := &plan.Retry[i]
		err := s.Service.BeginRetry(ctx, g.tasks[ti.TaskID], ti, &store.TaskInstanceNewTryParams{
			ID: ti.ID, NewID: uuid.NewString(), To: firstState(g.tasks[ti.TaskID]), Now: now,
			From: core.TIUpForRetry, // a try its worker took back meanwhile runs on
		})
		if err != nil && !benign(err) {
			return false, fmt.Errorf("retry %s: %w", runs.Describe(ti), err)
		}
		complete = complete && err == nil
	}
	for i := range plan.Expand {
		if err := s.expand(ctx, run, g, &plan.Expand[i], now); err != nil {
			return false, err
		}
	}

	// Decide already propagated this plan's skips and failures downstream;
	// an expansion's outcome (skipped, failed), and a retry that starts
	// from a trigger (none again), need another look.
	if len(plan.Expand) > 0 || len(plan.Retry) > 0 {
		res.again = true
	}
	return complete, nil
}

// pendingStates are the states Decide acts on: a none-state instance may be
// scheduled, skipped, failed upstream, removed or expanded, and an
// up_for_retry one may get its next try.
var pendingStates = []core.TIState{core.TINone, core.TIUpForRetry}

// activeStates are the non-terminal states other than pendingStates.
var activeStates = []core.TIState{core.TIScheduled, core.TIQueued, core.TIRunning, core.TIRestarting, core.TIDeferred}

// activity is what runActivity finds in a run.
type activity int

const (
	// runWaits: some instance is pending, Decide has work.
	runWaits activity = iota
	// runIdle: nothing is pending and some instances are still active, so
	// Decide's plan would be empty (its only other output, the run's final
	// state, needs every instance terminal).
	runIdle
	// runDone: every instance is terminal; the run is to be finished.
	runDone
)

// runActivity tells a run with nothing for Decide from one with work, with
// two small queries that return at most one row each, so that an idle run
// costs nothing in proportion to its size.
func (s *Scheduler) runActivity(ctx context.Context, run *core.DagRun) (activity, error) {
	pending, err := s.Store.TaskInstanceStates(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, States: pendingStates, Page: store.Page{Limit: 1}})
	if err != nil {
		return runWaits, fmt.Errorf("look for pending task instances: %w", err)
	}
	if len(pending) > 0 {
		return runWaits, nil
	}
	active, err := s.Store.TaskInstanceStates(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, States: activeStates, Page: store.Page{Limit: 1}})
	if err != nil {
		return runWaits, fmt.Errorf("look for active task instances: %w", err)
	}
	if len(active) > 0 {
		return runIdle, nil
	}
	return runDone, nil
}
