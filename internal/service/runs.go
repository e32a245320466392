package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// TriggerRun creates a queued run of the DAG's latest version with its task
// instances (runs.NewTaskInstances) and wakes the scheduler, which starts it
// within the DAG's max_active_runs. Needs role op. Errors wrap
// core.ErrNotFound (no such DAG), core.ErrInvalid (bad conf, run id or run
// type, or a DAG with no parsed version) or core.ErrConflict (the run id
// exists).
func (s *Service) TriggerRun(ctx context.Context, actor core.Actor, p runs.TriggerParams) (*core.DagRun, error) {
	return s.TriggerRunWith(ctx, actor, p, nil)
}

// TriggerRunWith is TriggerRun with inTx run in the same transaction once the
// run exists (nil = nothing): the scheduler consumes the asset events an
// asset-triggered run was created for, so both commit or neither does.
func (s *Service) TriggerRunWith(ctx context.Context, actor core.Actor, p runs.TriggerParams,
	inTx func(tx store.Store, run *core.DagRun) error) (*core.DagRun, error) {
	now := s.clock.Now()
	nr, err := runs.PrepareTrigger(p, s.triggerRules, now)
	if err != nil {
		return nil, err
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.DagRunTrigger, target: nr.DagID + "/" + nr.RunID,
		notify: []string{store.ChannelScheduler}}
	var run *core.DagRun
	err = s.do(ctx, c, func(tx store.Store, detail *string) error {
		if _, err := tx.DagGet(ctx, nr.DagID); errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("trigger dag %q: no such DAG: %w", nr.DagID, core.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("trigger dag %q: %w", nr.DagID, err)
		}
		version, err := tx.DagVersionLatest(ctx, nr.DagID)
		if errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("trigger dag %q: the DAG has no parsed version yet: %w", nr.DagID, core.ErrInvalid)
		}
		if err != nil {
			return fmt.Errorf("trigger dag %q: load latest version: %w", nr.DagID, err)
		}
		nr.InferInterval(&version.Spec)
		switch _, err := tx.DagRunGet(ctx, nr.DagID, nr.RunID); {
		case err == nil:
			return fmt.Errorf("trigger dag %q: run_id %q already exists; choose another: %w", nr.DagID, nr.RunID, core.ErrConflict)
		case !errors.Is(err, core.ErrNotFound):
			return fmt.Errorf("trigger dag %q: %w", nr.DagID, err)
		}
		tis := runs.NewTaskInstances(&version.Spec)
		if p.SingleTry {
			for i := range tis {
				tis[i].MaxTries = 1
			}
		}
		run, err = tx.DagRunCreate(ctx, &store.DagRunCreateParams{
			DagID: nr.DagID, RunID: nr.RunID, RunType: nr.RunType, State: nr.State,
			LogicalDate: &nr.LogicalDate, DataIntervalStart: &nr.DataIntervalStart, DataIntervalEnd: &nr.DataIntervalEnd,
			Conf: nr.Conf, DagVersionID: version.ID, Now: now, TaskInstances: tis,
			PartitionKey: nr.PartitionKey, TestJobID: nr.TestJobID,
		})
		if err != nil {
			return fmt.Errorf("trigger dag %q run %q: %w", nr.DagID, nr.RunID, err)
		}
		*detail = string(run.Conf)
		if inTx != nil {
			return inTx(tx, run)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// ClearParams selects the task instances a clear resets.
type ClearParams struct {
	DagID string
	// RunID is the run whose instances to clear; "" = every run of the DAG.
	RunID string
	// TaskIDs keeps the instances of these tasks; empty = every task. A task
	// with no instance in the selected runs is an error naming it.
	TaskIDs []string
	// OnlyFailed clears only failed and upstream_failed instances.
	OnlyFailed bool
	// KeepTaskState keeps the cleared instances' task state (by default a
	// clear deletes it: docs/task-state.md#clearing-a-task-instance).
	KeepTaskState bool
	// DryRun only selects: nothing changes and nothing is audited.
	DryRun bool
	// Downstream adds every task downstream of TaskIDs (transitively, in
	// the DAG's latest version), as Airflow's clear --downstream.
	Downstream bool
	// StartDate and EndDate keep the runs whose logical date is within
	// them, both inclusive (nil = unbounded), as Airflow's clear
	// --start-date/--end-date.
	StartDate, EndDate *time.Time
}

// Clear gives each selected task instance (runs.Clearable) a new try in
// state none so the scheduler runs it again: the current try goes to
// history, the new try gets a fresh id (a worker still running the old try
// can no longer report on it), max_tries is raised so the task has its full
// retries again (runs.ClearExtraTries), its XCom is deleted, and so is its
// task state unless KeepTaskState. A run that had finished goes back to
// queued. All in one transaction, audited, and the scheduler is notified.
// Needs role op. It returns the selected instances as they are afterwards
// (with DryRun: as they are). Errors wrap core.ErrNotFound for an unknown
// DAG, run or task.
func (s *Service) Clear(ctx context.Context, actor core.Actor, p ClearParams) ([]core.TaskInstance, error) {
	c := &change{actor: actor, need: core.RoleOp, action: audit.TaskInstanceClear, target: p.DagID,
		notify: []string{store.ChannelScheduler}}
	if p.RunID != "" && len(p.TaskIDs) == 0 {
		c.action, c.target = audit.DagRunClear, p.DagID+"/"+p.RunID
	}
	if p.DryRun {
		if err := actor.Authorize(c.need, c.action); err != nil {
			return nil, err
		}
		return s.clearSelection(ctx, s.st, p)
	}
	now := s.clock.Now()
	out := []core.TaskInstance{}
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		// Selected inside the transaction: what commits is what was
		// cleared, even if a worker finished a try meanwhile.
		selected, err := s.clearSelection(ctx, tx, p)
		if err != nil {
			return err
		}
		if len(selected) == 0 {
			return errNoChange
		}
		targets, err := s.clearSelected(ctx, tx, selected, now, p.KeepTaskState)
		if err != nil {
			return err
		}
		*detail = clearDetail(p, targets)
		out, err = reload(ctx, tx, selected)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// clearSelected clears each of selected (clearOne) and sends the finished
// runs they belong to back to queued; it returns the instances' audit
// targets.
func (s *Service) clearSelected(ctx context.Context, tx store.Store, selected []core.TaskInstance, now time.Time,
	keepState bool) ([]string, error) {
	targets := make([]string, len(selected))
	reopen := map[int64]bool{}
	for i := range selected {
		ti := &selected[i]
		targets[i] = runs.Target(ti)
		if err := s.clearOne(ctx, tx, ti, now, keepState); err != nil {
			return nil, err
		}
		if err := retireProducer(ctx, tx, ti); err != nil {
			return nil, err
		}
		reopen[ti.DagRunID] = true
	}
	for runID := range reopen {
		if _, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{
			ID: runID, From: []core.DagRunState{core.RunSuccess, core.RunFailed}, To: core.RunQueued, Now: now,
		}); err != nil {
			return nil, fmt.Errorf("clear: reopen dag run %d: %w", runID, err)
		}
	}
	return targets, nil
}

// maxAuditedTargets bounds the instances a clear's audit detail names.
const maxAuditedTargets = 100

// clearDetail is the audit detail of a clear: the options and which
// instances were reset (the first maxAuditedTargets, then how many more).
func clearDetail(p ClearParams, targets []string) string {
	d := fmt.Sprintf("only_failed=%t keep_task_state=%t ", p.OnlyFailed, p.KeepTaskState)
	if p.Downstream {
		d += "downstream=true "
	}
	for _, date := range []struct {
		name string
		at   *time.Time
	}{{"start_date", p.StartDate}, {"end_date", p.EndDate}} {
		if date.at != nil {
			d += date.name + "=" + date.at.UTC().Format(time.RFC3339) + " "
		}
	}
	if len(targets) > maxAuditedTargets {
		return d + strings.Join(targets[:maxAuditedTargets], ",") + fmt.Sprintf(" and %d more", len(targets)-maxAuditedTargets)
	}
	return d + strings.Join(targets, ",")
}

// clearSelection lists the instances p selects (runs.Clearable).
func (s *Service) clearSelection(ctx context.Context, st store.Store, p ClearParams) ([]core.TaskInstance, error) {
	if _, err := st.DagGet(ctx, p.DagID); err != nil {
		return nil, fmt.Errorf("dag_id %q: %w", p.DagID, err)
	}
	if p.StartDate != nil && p.EndDate != nil && p.EndDate.Before(*p.StartDate) {
		return nil, fmt.Errorf("end date %s is before start date %s: %w",
			p.EndDate.UTC().Format(time.RFC3339), p.StartDate.UTC().Format(time.RFC3339), core.ErrInvalid)
	}
	if p.Downstream && len(p.TaskIDs) > 0 {
		v, err := st.DagVersionLatest(ctx, p.DagID)
		if err != nil {
			return nil, fmt.Errorf("dag_id %q: %w", p.DagID, err)
		}
		p.TaskIDs = runs.WithDownstream(&v.Spec, p.TaskIDs)
	}
	lp := &store.TaskInstanceListParams{DagID: p.DagID, TaskIDs: p.TaskIDs}
	if p.RunID != "" {
		run, err := st.DagRunGet(ctx, p.DagID, p.RunID)
		if err != nil {
			return nil, fmt.Errorf("dag_id %q dag_run_id %q: %w", p.DagID, p.RunID, err)
		}
		lp = &store.TaskInstanceListParams{DagRunID: run.ID, TaskIDs: p.TaskIDs}
	}
	tis, err := st.TaskInstanceList(ctx, lp)
	if err != nil {
		return nil, fmt.Errorf("list task instances of dag_id %q: %w", p.DagID, err)
	}
	if p.StartDate != nil || p.EndDate != nil {
		if tis, err = inDateRange(ctx, st, p, tis); err != nil {
			return nil, err
		}
	}
	if err := everyTaskFound(tis, p.TaskIDs); err != nil {
		return nil, err
	}
	return runs.Clearable(tis, p.OnlyFailed), nil
}

// inDateRange keeps the instances of runs whose logical date is within
// p's dates.
func inDateRange(ctx context.Context, st store.Store, p ClearParams, tis []core.TaskInstance) ([]core.TaskInstance, error) {
	inRange, err := st.DagRunList(ctx, &store.DagRunListParams{DagID: p.DagID, LogicalDateGTE: p.StartDate, LogicalDateLTE: p.EndDate})
	if err != nil {
		return nil, fmt.Errorf("list runs of dag_id %q by logical date: %w", p.DagID, err)
	}
	keep := make(map[int64]bool, len(inRange))
	for _, r := range inRange {
		keep[r.ID] = true
	}
	out := tis[:0]
	for _, ti := range tis {
		if keep[ti.DagRunID] {
			out = append(out, ti)
		}
	}
	return out, nil
}

// everyTaskFound names the first of taskIDs with no instance in tis.
func everyTaskFound(tis []core.TaskInstance, taskIDs []string) error {
	found := map[string]bool{}
	for _, ti := range tis {
		found[ti.TaskID] = true
	}
	for _, id := range taskIDs {
		if !found[id] {
			return fmt.Errorf("task %q has no task instance in the selected runs: %w", id, core.ErrNotFound)
		}
	}
	return nil
}

// clearOne starts a new try of ti in state none and deletes its XCom and,
// unless keepState, its task state.
func (s *Service) clearOne(ctx context.Context, tx store.Store, ti *core.TaskInstance, now time.Time, keepState bool) error {
	v, err := s.versions.Get(ctx, tx, ti.DagVersionID)
	if err != nil {
		return fmt.Errorf("clear %s: load dag version %d: %w", runs.Describe(ti), ti.DagVersionID, err)
	}
	if err := tx.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{
		ID: ti.ID, NewID: uuid.NewString(), To: core.TINone, ExtraTries: runs.ClearExtraTries(ti, v.Spec.Task(ti.TaskID)), Now: now,
	}); err != nil {
		return fmt.Errorf("clear %s: new try: %w", runs.Describe(ti), err)
	}
	if err := tx.XComClear(ctx, ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex); err != nil {
		return fmt.Errorf("clear %s: delete xcom: %w", runs.Describe(ti), err)
	}
	if keepState {
		return nil
	}
	scope := core.TaskScope(ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)
	if _, err := tx.StateDelete(ctx, &store.StateDeleteParams{Scope: scope}); err != nil {
		return fmt.Errorf("clear %s: delete task state: %w", runs.Describe(ti), err)
	}
	return nil
}

// reload reads the current try of each instance (a clear gives new ids).
func reload(ctx context.Context, st store.Store, tis []core.TaskInstance) ([]core.TaskInstance, error) {
	out := make([]core.TaskInstance, 0, len(tis))
	for _, ti := range tis {
		cur, err := st.TaskInstanceGetByKey(ctx, ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)
		if err != nil {
			return nil, fmt.Errorf("reload %s: %w", runs.Describe(&ti), err)
		}
		out = append(out, *cur)
	}
	return out, nil
}

// MarkTask marks every instance of a task in a run (MarkTaskInstance
// each): the one of an unmapped task, each mapped one otherwise, as
// Airflow's grid marks a mapped task. It returns them as marked; an error
// wrapping core.ErrNotFound when the run has no instance of the task.
func (s *Service) MarkTask(ctx context.Context, actor core.Actor, dagID, runID, taskID string, state core.TIState) ([]core.TaskInstance, error) {
	if err := runs.Markable(state); err != nil {
		return nil, fmt.Errorf("new_state: %w", err)
	}
	tis, err := s.st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagID: dagID, RunID: runID, TaskID: taskID})
	if err != nil {
		return nil, fmt.Errorf("mark task %s of %s/%s: %w", taskID, dagID, runID, err)
	}
	if len(tis) == 0 {
		return nil, fmt.Errorf("mark task %q of %s/%s: the run has no instance of it: %w", taskID, dagID, runID, core.ErrNotFound)
	}
	out := make([]core.TaskInstance, 0, len(tis))
	for _, ti := range tis {
		marked, err := s.MarkTaskInstance(ctx, actor, core.TIKey{DagID: dagID, RunID: runID, TaskID: taskID, MapIndex: ti.MapIndex}, state)
		if err != nil {
			return out, err
		}
		out = append(out, *marked)
	}
	return out, nil
}

// MarkTaskInstance sets a task instance (its current try) to success,
// failed or skipped whatever its state, as an operator's override. If its
// run had finished, the run goes back to running so the scheduler
// re-evaluates it (and schedules what the new state unblocks). Marked
// success, its task state is cleared with [state_store] clear_on_success,
// as when a try succeeds. Needs role op. Errors wrap core.ErrInvalid for another state and core.ErrNotFound
// for an unknown instance.
func (s *Service) MarkTaskInstance(ctx context.Context, actor core.Actor, key core.TIKey, state core.TIState) (*core.TaskInstance, error) {
	if err := runs.Markable(state); err != nil {
		return nil, fmt.Errorf("new_state: %w", err)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.TaskInstanceMark, notify: []string{store.ChannelScheduler}}
	var out *core.TaskInstance
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		ti, err := tx.TaskInstanceGetByKey(ctx, key.DagID, key.RunID, key.TaskID, key.MapIndex)
		if err != nil {
			return fmt.Errorf("mark %s: %w", key, err)
		}
		c.target, *detail = runs.Target(ti), "new_state="+string(state)
		now := s.clock.Now()
		if _, err := tx.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: state, Now: now}); err != nil {
			return fmt.Errorf("mark %s %s: %w", runs.Describe(ti), state, err)
		}
		if err := retireProducer(ctx, tx, ti); err != nil {
			return err
		}
		if _, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{
			ID: ti.DagRunID, From: []core.DagRunState{core.RunSuccess, core.RunFailed}, To: core.RunRunning, Now: now,
		}); err != nil {
			return fmt.Errorf("mark %s %s: reopen run: %w", runs.Describe(ti), state, err)
		}
		if state == core.TISuccess && s.clearOnSuccess { // as a try that succeeds (docs/requirements.md#ts-4)
			if _, err := tx.StateDelete(ctx, &store.StateDeleteParams{Scope: core.TaskScope(ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)}); err != nil {
				return fmt.Errorf("mark %s %s: clear its task state: %w", runs.Describe(ti), state, err)
			}
		}
		out, err = tx.TaskInstanceGet(ctx, ti.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
