package runs

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// ClearTaskInstances gives each listed task instance a new try in state none
// so the scheduler runs it again: the current try goes to history, the new
// try gets a fresh id (a worker still running the old try can no longer
// report on it), max_tries is raised so the task has its full retries again,
// and the instance's XCom is deleted. A run that had finished goes back to
// queued, and the scheduler is notified. Instances already in state none are
// left alone. The instances' task state is deleted in the same transaction
// unless KeepTaskState is given (SPEC TS-5). Errors wrap core.ErrNotFound
// for an unknown id.
func ClearTaskInstances(ctx context.Context, st store.Store, clk core.Clock, ids []string, opts ...ClearOption) error {
	var o clearOptions
	for _, opt := range opts {
		opt(&o)
	}
	now := clk.Now()
	return st.WithTx(ctx, func(tx store.Store) error {
		specs := map[int64]*core.DAG{}
		reopen := map[int64]bool{}
		for _, id := range ids {
			ti, err := tx.TaskInstanceGet(ctx, id)
			if err != nil {
				return fmt.Errorf("clear task instance %s: %w", id, err)
			}
			if ti.State == core.TINone {
				continue
			}
			spec, err := cachedSpec(ctx, tx, specs, ti.DagVersionID)
			if err != nil {
				return fmt.Errorf("clear %s: %w", Describe(ti), err)
			}
			if err := clearOne(ctx, tx, spec, ti, now, o.keepTaskState); err != nil {
				return err
			}
			reopen[ti.DagRunID] = true
		}
		for runID := range reopen {
			if _, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{
				ID: runID, From: []core.DagRunState{core.RunSuccess, core.RunFailed}, To: core.RunQueued, Now: now,
			}); err != nil {
				return fmt.Errorf("clear task instances: reopen dag run %d: %w", runID, err)
			}
		}
		if len(reopen) == 0 {
			return nil
		}
		return tx.Notify(ctx, store.ChannelScheduler)
	})
}

// ClearOption adjusts a clear.
type ClearOption func(*clearOptions)

type clearOptions struct {
	keepTaskState bool
}

// KeepTaskState keeps the cleared instances' task state when keep is true
// (the REST API's keep_task_state); by default a clear deletes it.
func KeepTaskState(keep bool) ClearOption {
	return func(o *clearOptions) { o.keepTaskState = keep }
}

// clearOne starts a new try of ti in state none and deletes its XCom and,
// unless keepState, its task state.
func clearOne(ctx context.Context, tx store.Store, spec *core.DAG, ti *core.TaskInstance, now time.Time, keepState bool) error {
	retries := ti.MaxTries - 1
	if t := spec.Task(ti.TaskID); t != nil {
		retries = t.Retries
	}
	// The new try (try_number+1) may run and then retry `retries` times.
	extra := max(ti.TryNumber+1+retries-ti.MaxTries, 0)
	if err := tx.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{
		ID: ti.ID, NewID: uuid.NewString(), To: core.TINone, ExtraTries: extra, Now: now,
	}); err != nil {
		return fmt.Errorf("clear %s: new try: %w", Describe(ti), err)
	}
	if err := tx.XComClear(ctx, ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex); err != nil {
		return fmt.Errorf("clear %s: delete xcom: %w", Describe(ti), err)
	}
	if keepState {
		return nil
	}
	scope := core.TaskScope(ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)
	if _, err := tx.StateDelete(ctx, &store.StateDeleteParams{Scope: scope}); err != nil {
		return fmt.Errorf("clear %s: delete task state: %w", Describe(ti), err)
	}
	return nil
}

// ClearDagRun clears the task instances of one run (see ClearTaskInstances):
// every instance, or with onlyFailed only the failed and upstream_failed
// ones. Errors wrap core.ErrNotFound for an unknown run.
func ClearDagRun(ctx context.Context, st store.Store, clk core.Clock, dagID, runID string, onlyFailed bool, opts ...ClearOption) error {
	run, err := st.DagRunGet(ctx, dagID, runID)
	if err != nil {
		return fmt.Errorf("clear dag %q run %q: %w", dagID, runID, err)
	}
	p := &store.TaskInstanceListParams{DagRunID: run.ID}
	if onlyFailed {
		p.States = []core.TIState{core.TIFailed, core.TIUpstreamFailed}
	}
	tis, err := st.TaskInstanceList(ctx, p)
	if err != nil {
		return fmt.Errorf("clear dag %q run %q: list task instances: %w", dagID, runID, err)
	}
	ids := make([]string, 0, len(tis))
	for _, ti := range tis {
		ids = append(ids, ti.ID)
	}
	if err := ClearTaskInstances(ctx, st, clk, ids, opts...); err != nil {
		return fmt.Errorf("clear dag %q run %q: %w", dagID, runID, err)
	}
	return nil
}

// MarkTaskInstance sets a task instance to success, failed or skipped
// whatever its state, as an operator's override. If its run had finished,
// the run goes back to running so the scheduler re-evaluates its state (and
// schedules what the new state unblocks). Errors wrap core.ErrInvalid for
// another state and core.ErrNotFound for an unknown id.
func MarkTaskInstance(ctx context.Context, st store.Store, clk core.Clock, id string, state core.TIState) error {
	switch state {
	case core.TISuccess, core.TIFailed, core.TISkipped:
	default:
		return fmt.Errorf("mark task instance %s: state %q is not one of success, failed, skipped: %w",
			id, state.String(), core.ErrInvalid)
	}
	now := clk.Now()
	return st.WithTx(ctx, func(tx store.Store) error {
		ti, err := tx.TaskInstanceGet(ctx, id)
		if err != nil {
			return fmt.Errorf("mark task instance %s: %w", id, err)
		}
		if _, err := tx.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
			IDs: []string{id}, To: state, Now: now,
		}); err != nil {
			return fmt.Errorf("mark %s %s: %w", Describe(ti), state, err)
		}
		if _, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{
			ID: ti.DagRunID, From: []core.DagRunState{core.RunSuccess, core.RunFailed}, To: core.RunRunning, Now: now,
		}); err != nil {
			return fmt.Errorf("mark %s %s: reopen run: %w", Describe(ti), state, err)
		}
		return tx.Notify(ctx, store.ChannelScheduler)
	})
}

// cachedSpec loads a DAG version's spec once per operation.
func cachedSpec(ctx context.Context, st store.Store, cache map[int64]*core.DAG, versionID int64) (*core.DAG, error) {
	if spec, ok := cache[versionID]; ok {
		return spec, nil
	}
	v, err := st.DagVersionGet(ctx, versionID)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("dag version %d is missing: %w", versionID, err)
	}
	if err != nil {
		return nil, fmt.Errorf("load dag version %d: %w", versionID, err)
	}
	cache[versionID] = &v.Spec
	return &v.Spec, nil
}

// Describe names a task instance in errors and logs: dag, run, task and map
// index (when mapped).
func Describe(ti *core.TaskInstance) string {
	if ti.MapIndex == core.NoMapIndex {
		return fmt.Sprintf("dag %q run %q task %q", ti.DagID, ti.RunID, ti.TaskID)
	}
	return fmt.Sprintf("dag %q run %q task %q map_index %d", ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)
}
