package service

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// MarkRun sets a run to success or failed by hand, with its task instances
// as runs.RunMarks says (success: every instance but the skipped and
// removed ones success; failed: the running ones failed, the unfinished
// ones skipped), in one transaction, audited as dag_run.mark. A worker
// running a try that is marked learns it at its next heartbeat, as after
// MarkTaskInstance. Needs role op. It returns the run as it is afterwards.
// Errors wrap core.ErrInvalid for another state and core.ErrNotFound for an
// unknown DAG or run.
func (s *Service) MarkRun(ctx context.Context, actor core.Actor, dagID, runID string, state core.DagRunState) (*core.DagRun, error) {
	return s.markRun(ctx, actor, dagID, runID, state, false)
}

// FailUnfinishedRun fails a run as MarkRun marks one failed, unless it has
// finished meanwhile (then it returns nil and no error, and nothing is
// audited): what ends the run of a `weir dags test` process that stopped
// before its run did (interrupted, or found gone by a scheduler), which
// nothing else would ever run or end.
func (s *Service) FailUnfinishedRun(ctx context.Context, actor core.Actor, dagID, runID string) (*core.DagRun, error) {
	return s.markRun(ctx, actor, dagID, runID, core.RunFailed, true)
}

// EndTestRun ends what the `weir dags test` process running run id held
// (ADR 0042), once the test is done with it, was stopped or is gone: the
// callbacks the run fired that the test did not run fail, saying so, and
// the run is a test's no more: the deployment's claims no longer leave it
// alone. It returns how many callbacks it failed.
func (s *Service) EndTestRun(ctx context.Context, id int64) (int, error) {
	return s.st.DagRunEndTest(ctx, &store.DagRunEndTestParams{ID: id, Now: s.clock.Now(),
		Error: "the `weir dags test` running its run stopped before this callback ended"})
}

// markRun is MarkRun; unfinished leaves a finished run as it is.
func (s *Service) markRun(ctx context.Context, actor core.Actor, dagID, runID string, state core.DagRunState, unfinished bool) (*core.DagRun, error) {
	if err := runs.RunMarkable(state); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.DagRunMark, target: dagID + "/" + runID,
		notify: []string{store.ChannelScheduler}}
	var from []core.DagRunState
	if unfinished {
		from = []core.DagRunState{core.RunQueued, core.RunRunning}
	}
	var out *core.DagRun
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		run, err := tx.DagRunGet(ctx, dagID, runID)
		if err != nil {
			return fmt.Errorf("mark dag_id %q dag_run_id %q %s: %w", dagID, runID, state, err)
		}
		if unfinished && run.State.Terminal() {
			return errNoChange
		}
		tis, err := tx.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
		if err != nil {
			return fmt.Errorf("mark dag_id %q dag_run_id %q: list task instances: %w", dagID, runID, err)
		}
		marks, err := runs.RunMarks(tis, state)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		for to, ids := range marks {
			if _, err := tx.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: ids, To: to, Now: now}); err != nil {
				return fmt.Errorf("mark dag_id %q dag_run_id %q: set %d task instances %s: %w", dagID, runID, len(ids), to, err)
			}
		}
		moved, err := tx.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, From: from, To: state, Now: now})
		if err != nil {
			return fmt.Errorf("mark dag_id %q dag_run_id %q %s: %w", dagID, runID, state, err)
		}
		if !moved { // it finished meanwhile (unfinished): the marks roll back
			return errNoChange
		}
		*detail = markDetail(state, marks)
		out, err = tx.DagRunGetByID(ctx, run.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// markDetail is the audit detail of a run mark: the new state and how many
// task instances moved to which state.
func markDetail(state core.DagRunState, marks map[core.TIState][]string) string {
	parts := []string{"new_state=" + string(state)}
	for to, ids := range marks {
		parts = append(parts, fmt.Sprintf("%s=%d", to, len(ids)))
	}
	sort.Strings(parts[1:])
	return strings.Join(parts, " ")
}
