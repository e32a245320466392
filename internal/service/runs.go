package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// CheckRunID says why id cannot name a new run of this deployment (nil
// when it can; runs.TriggerRules.CheckRunID), for a form that lists every
// problem at once before it triggers.
func (s *Service) CheckRunID(id string) error { return s.triggerRules.CheckRunID(id) }

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
		if err := logicalDateFree(ctx, tx, nr); err != nil {
			return err
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

// logicalDateFree refuses a run that must be alone at its logical date
// (runs.NewRun.UniqueLogicalDate) when another run of its DAG has it:
// core.ErrConflict naming that run.
func logicalDateFree(ctx context.Context, tx store.Store, nr *runs.NewRun) error {
	if !nr.UniqueLogicalDate() {
		return nil
	}
	at := nr.LogicalDate
	same, err := tx.DagRunList(ctx, &store.DagRunListParams{DagID: nr.DagID, LogicalDateGTE: &at, LogicalDateLTE: &at, Page: store.Page{Limit: 1}})
	if err != nil {
		return fmt.Errorf("trigger dag %q: %w", nr.DagID, err)
	}
	if len(same) > 0 {
		return fmt.Errorf("trigger dag %q: run %q has logical date %s already; a run's logical date is its own (choose another, or clear that run): %w",
			nr.DagID, same[0].RunID, at.UTC().Format(time.RFC3339Nano), core.ErrConflict)
	}
	return nil
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
	// clear deletes it: docs/task-state.md#lifecycle).
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
	return d + auditedTargets(targets)
}

// auditedTargets joins the first maxAuditedTargets of targets, then says
// how many more.
func auditedTargets(targets []string) string {
	if len(targets) > maxAuditedTargets {
		return strings.Join(targets[:maxAuditedTargets], ",") + fmt.Sprintf(" and %d more", len(targets)-maxAuditedTargets)
	}
	return strings.Join(targets, ",")
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
		if tis, err = inDateRange(ctx, st, p.DagID, p.StartDate, p.EndDate, tis); err != nil {
			return nil, err
		}
	}
	if err := everyTaskFound(tis, p.TaskIDs); err != nil {
		return nil, err
	}
	return runs.Clearable(tis, p.OnlyFailed), nil
}

// inDateRange keeps the instances of dagID's runs whose logical date is
// within from and to (both inclusive; nil: unbounded).
func inDateRange(ctx context.Context, st store.Store, dagID string, from, to *time.Time, tis []core.TaskInstance) ([]core.TaskInstance, error) {
	inRange, err := st.DagRunList(ctx, &store.DagRunListParams{DagID: dagID, LogicalDateGTE: from, LogicalDateLTE: to})
	if err != nil {
		return nil, fmt.Errorf("list runs of dag_id %q by logical date: %w", dagID, err)
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

// MarkParams selects the task instances a mark sets, as Airflow's
// set_task_instance_state: one task's instances in a run and, when asked,
// its relatives in the DAG and the same tasks in earlier or later runs.
type MarkParams struct {
	DagID, RunID, TaskID string
	// MapIndex keeps one instance of TaskID in each selected run (nil:
	// every one, as the grid marks a mapped task); the relatives' are all
	// taken.
	MapIndex *int
	State    core.TIState
	// Upstream and Downstream add every task upstream / downstream of
	// TaskID, transitively, in the DAG's latest version.
	Upstream, Downstream bool
	// Past and Future add the selected tasks' instances in the DAG's runs
	// whose logical date is before / after the run's.
	Past, Future bool
	// DryRun only selects: nothing changes and nothing is audited.
	DryRun bool
}

// Mark sets the instances p selects that are not in p.State already
// (runs.Marked) to it — success, failed or skipped, whatever their state,
// as an operator's override — in one transaction, audited. A running try
// it ends is stopped by its worker at its next heartbeat. A run that had
// finished goes back to running so the scheduler re-evaluates it (and
// schedules what the new states unblock). Marked success, an instance's
// task state is cleared with [state_store] clear_on_success, as when a
// try succeeds. Needs role op. It returns the instances it changed as
// they are afterwards (with DryRun: as they are). Errors wrap
// core.ErrInvalid for another state and core.ErrNotFound for an unknown
// DAG, run or task.
func (s *Service) Mark(ctx context.Context, actor core.Actor, p MarkParams) ([]core.TaskInstance, error) {
	if err := runs.Markable(p.State); err != nil {
		return nil, fmt.Errorf("new_state: %w", err)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.TaskInstanceMark, target: p.DagID + "/" + p.RunID + "/" + p.TaskID,
		notify: []string{store.ChannelScheduler}}
	if p.DryRun {
		if err := actor.Authorize(c.need, c.action); err != nil {
			return nil, err
		}
		return s.markSelection(ctx, s.st, p)
	}
	out := []core.TaskInstance{}
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		// Selected inside the transaction: what commits is what was marked.
		selected, err := s.markSelection(ctx, tx, p)
		if err != nil {
			return err
		}
		if len(selected) == 0 {
			return errNoChange
		}
		if err := s.markSelected(ctx, tx, selected, p.State); err != nil {
			return err
		}
		*detail = tiMarkDetail(p, selected)
		out, err = reload(ctx, tx, selected)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// markSelected sets each of selected to state, retires what it produced,
// sends the finished runs they belong to back to running and, marked
// success with clear_on_success, clears their task state.
func (s *Service) markSelected(ctx context.Context, tx store.Store, selected []core.TaskInstance, state core.TIState) error {
	now := s.clock.Now()
	ids := make([]string, len(selected))
	for i := range selected {
		ids[i] = selected[i].ID
	}
	if _, err := tx.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: ids, To: state, Now: now}); err != nil {
		return fmt.Errorf("mark %d task instances %s: %w", len(ids), state, err)
	}
	reopen := map[int64]bool{}
	for i := range selected {
		ti := &selected[i]
		if err := retireProducer(ctx, tx, ti); err != nil {
			return err
		}
		reopen[ti.DagRunID] = true
		if state == core.TISuccess && s.clearOnSuccess { // as a try that succeeds (docs/requirements.md#ts-4)
			if _, err := tx.StateDelete(ctx, &store.StateDeleteParams{Scope: core.TaskScope(ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)}); err != nil {
				return fmt.Errorf("mark %s %s: clear its task state: %w", runs.Describe(ti), state, err)
			}
		}
	}
	for runID := range reopen {
		if _, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{
			ID: runID, From: []core.DagRunState{core.RunSuccess, core.RunFailed}, To: core.RunRunning, Now: now,
		}); err != nil {
			return fmt.Errorf("mark: reopen dag run %d: %w", runID, err)
		}
	}
	return nil
}

// tiMarkDetail is the audit detail of a mark: the new state, the options and
// which instances changed (the first maxAuditedTargets, then how many more).
func tiMarkDetail(p MarkParams, selected []core.TaskInstance) string {
	d := "new_state=" + string(p.State) + " "
	for _, o := range []struct {
		name string
		on   bool
	}{{"upstream", p.Upstream}, {"downstream", p.Downstream}, {"past", p.Past}, {"future", p.Future}} {
		if o.on {
			d += o.name + "=true "
		}
	}
	targets := make([]string, len(selected))
	for i := range selected {
		targets[i] = runs.Target(&selected[i])
	}
	return d + auditedTargets(targets)
}

// markSelection lists the instances p selects that a mark to p.State
// changes (runs.Marked).
func (s *Service) markSelection(ctx context.Context, st store.Store, p MarkParams) ([]core.TaskInstance, error) {
	run, err := st.DagRunGet(ctx, p.DagID, p.RunID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q dag_run_id %q: %w", p.DagID, p.RunID, err)
	}
	taskIDs := []string{p.TaskID}
	if p.Upstream || p.Downstream {
		v, err := st.DagVersionLatest(ctx, p.DagID)
		if err != nil {
			return nil, fmt.Errorf("dag_id %q: %w", p.DagID, err)
		}
		var related []string
		if p.Upstream {
			related = runs.WithUpstream(&v.Spec, taskIDs)
		}
		if p.Downstream {
			related = append(related, runs.WithDownstream(&v.Spec, taskIDs)...)
		}
		taskIDs = uniqueStrings(related)
	}
	lp := &store.TaskInstanceListParams{DagRunID: run.ID, TaskIDs: taskIDs}
	if p.Past || p.Future {
		lp = &store.TaskInstanceListParams{DagID: p.DagID, TaskIDs: taskIDs}
	}
	tis, err := st.TaskInstanceList(ctx, lp)
	if err != nil {
		return nil, fmt.Errorf("list task instances of dag_id %q: %w", p.DagID, err)
	}
	if p.Past || p.Future {
		var from, to *time.Time
		if !p.Past {
			from = run.LogicalDate
		}
		if !p.Future {
			to = run.LogicalDate
		}
		if tis, err = inDateRange(ctx, st, p.DagID, from, to, tis); err != nil {
			return nil, err
		}
	}
	if p.MapIndex != nil {
		tis = slices.DeleteFunc(tis, func(ti core.TaskInstance) bool { return ti.TaskID == p.TaskID && ti.MapIndex != *p.MapIndex })
		if !slices.ContainsFunc(tis, func(ti core.TaskInstance) bool { return ti.TaskID == p.TaskID }) {
			return nil, fmt.Errorf("task %q has no instance with map_index %d in run %q: %w", p.TaskID, *p.MapIndex, p.RunID, core.ErrNotFound)
		}
	}
	if err := everyTaskFound(tis, []string{p.TaskID}); err != nil {
		return nil, err
	}
	return runs.Marked(tis, p.State), nil
}

// uniqueStrings is ids without repeats, in their first order.
func uniqueStrings(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	return slices.DeleteFunc(ids, func(id string) bool {
		dup := seen[id]
		seen[id] = true
		return dup
	})
}

// MarkTaskInstance marks one task instance (Mark with its map index and no
// relatives) and returns it as it is afterwards, changed or not.
func (s *Service) MarkTaskInstance(ctx context.Context, actor core.Actor, key core.TIKey, state core.TIState) (*core.TaskInstance, error) {
	mi := key.MapIndex
	if _, err := s.Mark(ctx, actor, MarkParams{DagID: key.DagID, RunID: key.RunID, TaskID: key.TaskID, MapIndex: &mi, State: state}); err != nil {
		return nil, err
	}
	ti, err := s.st.TaskInstanceGetByKey(ctx, key.DagID, key.RunID, key.TaskID, key.MapIndex)
	if err != nil {
		return nil, fmt.Errorf("mark %s: %w", key, err)
	}
	return ti, nil
}
