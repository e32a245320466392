package service

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// SetDagPaused pauses or unpauses a DAG (a paused DAG gets no new runs and
// its runs do not advance) and wakes the scheduler, which starts or stops
// acting on it at once. Needs role op. Errors wrap core.ErrNotFound for an
// unknown DAG.
func (s *Service) SetDagPaused(ctx context.Context, actor core.Actor, dagID string, paused bool) (*core.DagModel, error) {
	c := &change{actor: actor, need: core.RoleOp, action: audit.DagUnpause, target: dagID,
		notify: []string{store.ChannelScheduler}}
	if paused {
		c.action = audit.DagPause
	}
	var out *core.DagModel
	err := s.do(ctx, c, func(tx store.Store, _ *string) error {
		if _, err := tx.DagGet(ctx, dagID); err != nil {
			return fmt.Errorf("dag_id %q: %w", dagID, err)
		}
		if err := tx.DagSetPaused(ctx, dagID, paused); err != nil {
			return fmt.Errorf("set is_paused of dag_id %q: %w", dagID, err)
		}
		var err error
		out, err = tx.DagGet(ctx, dagID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteDag deletes a DAG's metadata and history, as Airflow's `dags
// delete`: its row, versions, runs, task instances and their tries, XCom,
// task state, backfills and warnings (store.DagDelete). It refuses while
// any of its task instances is queued, running or deferred (a worker or
// triggerer holds it). A DAG whose file is still in the DAGs folder comes
// back at the DAG processor's next scan, with no history. Needs role op.
// Returns how many runs went. Errors wrap core.ErrNotFound or
// core.ErrConflict.
func (s *Service) DeleteDag(ctx context.Context, actor core.Actor, dagID string) (int, error) {
	c := &change{actor: actor, need: core.RoleOp, action: audit.DagDelete, target: dagID,
		notify: []string{store.ChannelScheduler}}
	runs := 0
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		if _, err := tx.DagGet(ctx, dagID); err != nil {
			return fmt.Errorf("dag_id %q: %w", dagID, err)
		}
		busy, err := held(ctx, tx, &store.TaskInstanceListParams{DagID: dagID})
		if err != nil {
			return fmt.Errorf("delete dag_id %q: %w", dagID, err)
		}
		if busy > 0 {
			return fmt.Errorf("dag_id %q has %d task instances queued, running or deferred; wait for them or mark them failed, then delete: %w",
				dagID, busy, core.ErrConflict)
		}
		if runs, err = tx.DagRunCount(ctx, &store.DagRunListParams{DagID: dagID}); err != nil {
			return fmt.Errorf("delete dag_id %q: %w", dagID, err)
		}
		if err := tx.DagDelete(ctx, dagID); err != nil {
			return err
		}
		*detail = fmt.Sprintf("runs=%d", runs)
		return nil
	})
	return runs, err
}

// DeleteRun deletes run runID of dagID and its history (task instances,
// their tries, XComs, task state), as Airflow's DELETE of a run; its
// logs stay in the log store. Needs role op. Errors wrap core.ErrNotFound
// for an unknown run and core.ErrConflict while a task instance of it is
// queued, running or deferred (a worker or the triggerer holds it).
func (s *Service) DeleteRun(ctx context.Context, actor core.Actor, dagID, runID string) error {
	c := &change{actor: actor, need: core.RoleOp, action: audit.DagRunDelete, target: dagID + "/" + runID,
		notify: []string{store.ChannelScheduler}}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		run, err := tx.DagRunGet(ctx, dagID, runID)
		if err != nil {
			return fmt.Errorf("dag_id %q dag_run_id %q: %w", dagID, runID, err)
		}
		busy, err := held(ctx, tx, &store.TaskInstanceListParams{DagRunID: run.ID})
		if err != nil {
			return fmt.Errorf("delete dag run %s/%s: %w", dagID, runID, err)
		}
		if busy > 0 {
			return fmt.Errorf("dag run %s/%s has %d task instances queued, running or deferred; wait for them or mark them failed, then delete: %w",
				dagID, runID, busy, core.ErrConflict)
		}
		return tx.DagRunDelete(ctx, run.ID)
	})
}

// held counts the task instances p selects that a worker or the triggerer
// holds (queued, running, deferred): what a delete must wait for.
func held(ctx context.Context, tx store.Store, p *store.TaskInstanceListParams) (int, error) {
	p.States = []core.TIState{core.TIQueued, core.TIRunning, core.TIDeferred}
	return tx.TaskInstanceCount(ctx, p)
}
