package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// BackfillResult is what CreateBackfill did, or (dry run) would do.
type BackfillResult struct {
	// Backfill is the created backfill; nil for a dry run.
	Backfill *core.Backfill
	// Steps are the backfill's logical dates in the order its runs start,
	// each with what was (or would be) done there.
	Steps []runs.BackfillStep
}

// CreateBackfill plans a backfill of r.DagID's latest version over r's
// range (runs.PlanBackfill) and, unless r.DryRun, records it and its runs
// in one transaction: a queued run of type backfill for each date without
// one, the existing run cleared and made the backfill's where r.Reprocess
// says so, and a backfill_dag_run row for every date (with why it made no
// run when skipped). The scheduler starts the runs within the backfill's
// max_active_runs, in step order. Needs role op. Errors wrap
// core.ErrNotFound (no such DAG), core.ErrInvalid (bad request, a DAG with
// no schedule or no parsed version) or core.ErrConflict (the DAG has a
// backfill not completed yet).
func (s *Service) CreateBackfill(ctx context.Context, actor core.Actor, r runs.BackfillRequest) (*BackfillResult, error) {
	if err := runs.CheckBackfill(&r); err != nil {
		return nil, fmt.Errorf("backfill dag %q: %w", r.DagID, err)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.BackfillCreate, target: r.DagID,
		notify: []string{store.ChannelScheduler}}
	now := s.clock.Now()
	if r.DryRun {
		if err := actor.Authorize(c.need, c.action); err != nil {
			return nil, err
		}
		_, steps, err := s.planBackfill(ctx, s.st, &r, now)
		return &BackfillResult{Steps: steps}, err
	}
	res := &BackfillResult{}
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		version, steps, err := s.planBackfill(ctx, tx, &r, now)
		if err != nil {
			return err
		}
		if err := runs.CheckBackfillRuns(&r, steps); err != nil {
			return err
		}
		res.Steps = steps
		res.Backfill, err = tx.BackfillCreate(ctx, &store.BackfillCreateParams{DagID: r.DagID, FromDate: r.From, ToDate: r.To,
			DagRunConf: r.DagRunConf, ReprocessBehavior: r.Reprocess, MaxActiveRuns: r.MaxActiveRuns, Now: now})
		if err != nil {
			return fmt.Errorf("backfill dag %q: %w", r.DagID, err)
		}
		for i := range steps {
			if err := s.backfillStep(ctx, tx, res.Backfill, version, &steps[i], i+1, now); err != nil {
				return err
			}
		}
		c.target = fmt.Sprintf("%s/%d", r.DagID, res.Backfill.ID)
		*detail = fmt.Sprintf("from_date=%s to_date=%s reprocess_behavior=%s max_active_runs=%d run_backwards=%t dates=%d",
			r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339), r.Reprocess, r.MaxActiveRuns, r.RunBackwards, len(steps))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// planBackfill loads what a plan needs and makes it; a DAG with a
// backfill still in progress is a conflict.
func (s *Service) planBackfill(ctx context.Context, st store.Store, r *runs.BackfillRequest,
	now time.Time) (*core.DagVersion, []runs.BackfillStep, error) {
	if _, err := st.DagGet(ctx, r.DagID); err != nil {
		return nil, nil, fmt.Errorf("backfill dag %q: %w", r.DagID, err)
	}
	version, err := st.DagVersionLatest(ctx, r.DagID)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil, fmt.Errorf("backfill dag %q: the DAG has no parsed version yet: %w", r.DagID, core.ErrInvalid)
	} else if err != nil {
		return nil, nil, fmt.Errorf("backfill dag %q: %w", r.DagID, err)
	}
	active, err := st.BackfillList(ctx, &store.BackfillListParams{DagID: r.DagID, OnlyActive: true, Page: store.Page{Limit: 1}})
	if err != nil {
		return nil, nil, fmt.Errorf("backfill dag %q: %w", r.DagID, err)
	}
	if len(active) > 0 {
		return nil, nil, fmt.Errorf("backfill dag %q: backfill %d of this DAG is still in progress; cancel it or wait until it completes: %w",
			r.DagID, active[0].ID, core.ErrConflict)
	}
	existing, err := st.DagRunList(ctx, &store.DagRunListParams{DagID: r.DagID, LogicalDateGTE: &r.From, LogicalDateLTE: &r.To})
	if err != nil {
		return nil, nil, fmt.Errorf("backfill dag %q: list runs in range: %w", r.DagID, err)
	}
	steps, err := runs.PlanBackfill(&version.Spec, r, existing, now)
	if err != nil {
		return nil, nil, fmt.Errorf("backfill: %w", err)
	}
	return version, steps, nil
}

// backfillStep carries out one step of a backfill's plan and records it.
func (s *Service) backfillStep(ctx context.Context, tx store.Store, b *core.Backfill, version *core.DagVersion,
	st *runs.BackfillStep, ordinal int, now time.Time) error {
	rec := &core.BackfillDagRun{BackfillID: b.ID, LogicalDate: st.Interval.Start, SortOrdinal: ordinal, ExceptionReason: st.Reason}
	switch st.Action {
	case runs.BackfillCreate:
		start, end := st.Interval.Start.UTC(), st.Interval.End.UTC()
		run, err := tx.DagRunCreate(ctx, &store.DagRunCreateParams{
			DagID: b.DagID, RunID: runs.RunID(core.RunBackfill, start), RunType: core.RunBackfill, State: core.RunQueued,
			LogicalDate: &start, DataIntervalStart: &start, DataIntervalEnd: &end, Conf: b.DagRunConf,
			DagVersionID: version.ID, Now: now, TaskInstances: runs.NewTaskInstances(&version.Spec), BackfillID: &b.ID,
		})
		if err != nil {
			return fmt.Errorf("backfill %d: create run at %s: %w", b.ID, start.Format(time.RFC3339), err)
		}
		rec.DagRunID = &run.ID
	case runs.BackfillClear:
		tis, err := s.clearSelection(ctx, tx, ClearParams{DagID: b.DagID, RunID: st.Existing.RunID})
		if err != nil {
			return fmt.Errorf("backfill %d: %w", b.ID, err)
		}
		if _, err := s.clearSelected(ctx, tx, tis, now, false); err != nil {
			return fmt.Errorf("backfill %d: %w", b.ID, err)
		}
		if err := tx.DagRunJoinBackfill(ctx, st.Existing.ID, b.ID); err != nil {
			return fmt.Errorf("backfill %d: %w", b.ID, err)
		}
		rec.DagRunID = &st.Existing.ID
	case runs.BackfillSkip:
		rec.DagRunID = &st.Existing.ID
	}
	return tx.BackfillDagRunInsert(ctx, rec)
}

// PauseBackfill pauses (or unpauses) a backfill: while paused the scheduler
// starts none of its queued runs; running ones go on. Needs role op.
// Errors wrap core.ErrNotFound, or core.ErrConflict for a completed
// backfill.
func (s *Service) PauseBackfill(ctx context.Context, actor core.Actor, id int64, paused bool) (*core.Backfill, error) {
	action := audit.BackfillPause
	if !paused {
		action = audit.BackfillUnpause
	}
	c := &change{actor: actor, need: core.RoleOp, action: action, target: fmt.Sprint(id),
		notify: []string{store.ChannelScheduler}}
	var out *core.Backfill
	err := s.do(ctx, c, func(tx store.Store, _ *string) error {
		b, err := openBackfill(ctx, tx, id)
		if err != nil {
			return err
		}
		c.target = fmt.Sprintf("%s/%d", b.DagID, id)
		if err := tx.BackfillSetPaused(ctx, id, paused, s.clock.Now()); err != nil {
			return err
		}
		out, err = tx.BackfillGet(ctx, id)
		return err
	})
	return out, err
}

// CancelBackfill cancels a backfill as Airflow does: it is paused, its
// queued runs (not started) are marked failed, and it is completed; runs
// already running finish. Needs role op. Errors wrap core.ErrNotFound, or
// core.ErrConflict for a completed backfill.
func (s *Service) CancelBackfill(ctx context.Context, actor core.Actor, id int64) (*core.Backfill, error) {
	c := &change{actor: actor, need: core.RoleOp, action: audit.BackfillCancel, target: fmt.Sprint(id),
		notify: []string{store.ChannelScheduler}}
	var out *core.Backfill
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		b, err := openBackfill(ctx, tx, id)
		if err != nil {
			return err
		}
		c.target = fmt.Sprintf("%s/%d", b.DagID, id)
		now := s.clock.Now()
		if err := tx.BackfillSetPaused(ctx, id, true, now); err != nil {
			return err
		}
		n, err := tx.BackfillFailQueued(ctx, id, now)
		if err != nil {
			return err
		}
		if _, err := tx.BackfillComplete(ctx, id, now); err != nil {
			return err
		}
		*detail = fmt.Sprintf("queued runs failed=%d", n)
		out, err = tx.BackfillGet(ctx, id)
		return err
	})
	return out, err
}

// openBackfill returns a backfill not completed yet.
func openBackfill(ctx context.Context, st store.Store, id int64) (*core.Backfill, error) {
	b, err := st.BackfillGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("backfill_id %d: %w", id, err)
	}
	if b.CompletedAt != nil {
		return nil, fmt.Errorf("backfill %d of dag %q is already completed: %w", id, b.DagID, core.ErrConflict)
	}
	return b, nil
}

// CompleteBackfills completes every backfill none of whose runs is queued
// or running (the scheduler calls it each pass) and returns how many it
// completed.
func (s *Service) CompleteBackfills(ctx context.Context) (int, error) {
	active, err := s.st.BackfillList(ctx, &store.BackfillListParams{OnlyActive: true})
	if err != nil {
		return 0, fmt.Errorf("list active backfills: %w", err)
	}
	done := 0
	for _, b := range active {
		n, err := s.st.DagRunCount(ctx, &store.DagRunListParams{BackfillID: b.ID,
			States: []core.DagRunState{core.RunQueued, core.RunRunning}})
		if err != nil {
			return done, fmt.Errorf("backfill %d: count unfinished runs: %w", b.ID, err)
		}
		if n > 0 {
			continue
		}
		ok, err := s.st.BackfillComplete(ctx, b.ID, s.clock.Now())
		if err != nil {
			return done, err
		}
		if ok {
			done++
			s.log.Info("backfill completed", "dag_id", b.DagID, "backfill_id", b.ID)
		}
	}
	return done, nil
}
