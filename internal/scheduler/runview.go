package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// How the scheduler keeps a running run's task instances between passes.
//
// A pass reads only the instances whose updated_at is at or after the start
// of its previous read minus changeSlack (every change of state, claim or
// try stamps updated_at; index task_instance_run_updated), so its cost
// follows what changed rather than the run's size: their ids and states
// first, then whole the rows whose try or state the view does not hold. The slack covers writers
// that stamped a row before that read but committed after it. The view is
// a hint, never the source of truth:
//
//   - before a plan built on an incrementally read view is applied, the
//     rows it depends on (the decided instances and every instance of their
//     upstream tasks) are read again; on any difference the view is
//     reloaded and the run decided afresh, so a missed change only delays;
//   - a run is finished only from a full load;
//   - every change stays conditional (From states), and a change that did
//     not land as planned, or any error, drops the view;
//   - a full load also happens at least every fullReloadAfter (scheduler
//     clock) and every fullReloadReads incremental reads, which bounds how
//     long a change stamped more than changeSlack before its commit (a slow
//     transaction, a node whose clock lags) can go unnoticed.
const (
	changeSlack     = 250 * time.Millisecond
	fullReloadAfter = 5 * time.Second
	fullReloadReads = 200
)

// tiKey identifies a task instance across tries: a retry or a clear changes
// its id, never its key.
type tiKey struct {
	task     string
	mapIndex int
}

func keyOf(ti *core.TaskInstance) tiKey { return tiKey{ti.TaskID, ti.MapIndex} }

// runView is the scheduler's copy of one running run's task instances.
type runView struct {
	tis    []core.TaskInstance
	index  map[tiKey]int  // position in tis
	ids    map[string]int // position in tis by try id
	read   time.Time      // scheduler clock when the last read started
	loaded time.Time      // ... when the last full load started
	reads  int            // incremental reads since the last full load
}

// newRunView builds a view from a full load started at now.
func newRunView(tis []core.TaskInstance, now time.Time) *runView {
	v := &runView{tis: tis, read: now, loaded: now}
	v.reindex()
	return v
}

func (v *runView) reindex() {
	v.index = make(map[tiKey]int, len(v.tis))
	v.ids = make(map[string]int, len(v.tis))
	for i := range v.tis {
		v.index[keyOf(&v.tis[i])] = i
		v.ids[v.tis[i].ID] = i
	}
}

// stale returns the ids among states (a run's recently changed rows) whose
// try the view does not hold in that state: the rows to read whole.
func (v *runView) stale(states []store.TaskInstanceState) []string {
	var ids []string
	for _, st := range states {
		if at, ok := v.ids[st.ID]; !ok || v.tis[at].State != st.State {
			ids = append(ids, st.ID)
		}
	}
	return ids
}

// due reports whether the next read must be a full load: the view is old,
// has been read incrementally often, or the clock went back.
func (v *runView) due(now time.Time) bool {
	return now.Sub(v.loaded) >= fullReloadAfter || v.reads >= fullReloadReads || now.Before(v.read)
}

// pending reports whether the view holds an instance Decide may act on.
func (v *runView) pending() bool {
	for i := range v.tis {
		if slices.Contains(pendingStates, v.tis[i].State) {
			return true
		}
	}
	return false
}

// merge applies changed rows: a row replaces the instance with its key (a
// new try keeps the key), a new key is added, and the first map index of a
// mapped task removes its placeholder (an expansion deletes it) — except
// for a task in lazy, whose placeholder stays while its stream expands.
func (v *runView) merge(changed []core.TaskInstance, lazy map[string]bool) {
	expanded := false
	for i := range changed {
		ti := &changed[i]
		if at, ok := v.index[keyOf(ti)]; ok {
			delete(v.ids, v.tis[at].ID)
			v.tis[at] = *ti
			v.ids[ti.ID] = at
			continue
		}
		v.index[keyOf(ti)] = len(v.tis)
		v.ids[ti.ID] = len(v.tis)
		v.tis = append(v.tis, *ti)
		if ti.MapIndex >= 0 && !lazy[ti.TaskID] {
			_, ph := v.index[tiKey{ti.TaskID, core.NoMapIndex}]
			expanded = expanded || ph
		}
	}
	if !expanded {
		return
	}
	v.tis = slices.DeleteFunc(v.tis, func(ti core.TaskInstance) bool {
		if ti.MapIndex != core.NoMapIndex || lazy[ti.TaskID] {
			return false
		}
		_, mapped := v.index[tiKey{ti.TaskID, 0}]
		return mapped
	})
	v.reindex()
}

// view returns run's view brought up to date at now (fresh when it was just
// fully loaded).
func (s *Scheduler) view(ctx context.Context, run *core.DagRun, g *graph, now time.Time) (v *runView, fresh bool, err error) {
	v = s.views[run.ID]
	if v == nil || v.due(now) {
		v, err = s.loadView(ctx, run, now)
		return v, true, err
	}
	// The window of changed rows spans changeSlack of rows already seen:
	// their ids and states are read first, and whole only the rows that
	// differ from the view.
	states, err := s.Store.TaskInstanceStates(ctx, &store.TaskInstanceListParams{
		DagRunID: run.ID, UpdatedSince: v.read.Add(-changeSlack),
	})
	if err != nil {
		return nil, false, fmt.Errorf("list changed task instances: %w", err)
	}
	if ids := v.stale(states); len(ids) > 0 {
		changed, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, IDs: ids, Unordered: true})
		if err != nil {
			return nil, false, fmt.Errorf("list changed task instances: %w", err)
		}
		v.merge(changed, g.lazy)
	}
	v.read = now
	v.reads++
	return v, false, nil
}

// loadView reads every instance of run and keeps them as its view.
func (s *Scheduler) loadView(ctx context.Context, run *core.DagRun, now time.Time) (*runView, error) {
	tis, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		return nil, fmt.Errorf("list task instances: %w", err)
	}
	v := newRunView(tis, now)
	s.views[run.ID] = v
	return v, nil
}

// confirm reports whether plan, decided from an incrementally read view,
// still holds: the rows it depends on (its decided instances and every
// instance of their upstream tasks) are read again and must match the view
// (same tries in the same states, none missing or added). A plan that
// finishes the run is never confirmed this way; it needs a full load.
func (s *Scheduler) confirm(ctx context.Context, run *core.DagRun, g *graph, v *runView, plan *Plan) (bool, error) {
	if plan.RunState != "" {
		return false, nil
	}
	tasks := map[string]bool{}
	addTask := func(id string) {
		tasks[id] = true
		if t := g.tasks[id]; t != nil {
			for _, up := range t.DependsOn {
				tasks[up] = true
			}
		}
	}
	decided := make(map[string]bool, len(plan.Schedule)+len(plan.Skip)+len(plan.UpstreamFailed))
	for _, ids := range [][]string{plan.Schedule, plan.Skip, plan.UpstreamFailed} {
		for _, id := range ids {
			decided[id] = true
		}
	}
	for _, tis := range [][]core.TaskInstance{plan.Expand, plan.Retry} {
		for i := range tis {
			addTask(tis[i].TaskID)
		}
	}
	want := 0 // instances of the re-read tasks in the view
	for i := range v.tis {
		if decided[v.tis[i].ID] {
			addTask(v.tis[i].TaskID)
		}
	}
	if len(tasks) == 0 {
		return true, nil // only removals, which need no upstream
	}
	for i := range v.tis {
		if tasks[v.tis[i].TaskID] {
			want++
		}
	}
	ids := make([]string, 0, len(tasks))
	for id := range tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	got, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskIDs: ids, Unordered: true})
	if err != nil {
		return false, fmt.Errorf("re-read task instances the plan depends on: %w", err)
	}
	if len(got) != want {
		return false, nil
	}
	for i := range got {
		at, ok := v.index[keyOf(&got[i])]
		if !ok || v.tis[at].ID != got[i].ID || v.tis[at].State != got[i].State {
			return false, nil
		}
	}
	return true, nil
}

// forget drops the views of runs this pass did not process (finished,
// paused or gone), so a run that comes back starts from a full load.
func (s *Scheduler) forget(processed map[int64]bool) {
	for id := range s.views {
		if !processed[id] {
			delete(s.views, id)
		}
	}
}
