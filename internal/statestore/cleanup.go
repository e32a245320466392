package statestore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// CleanupReport says what a cleanup did (or, dry, would do).
type CleanupReport struct {
	// Before is the cut-off of task state: rows whose expires_at is
	// earlier go.
	Before time.Time
	DryRun bool
	// Expired lists, on a dry run, every task-state row that would go, by
	// dag, run, task, map index and key.
	Expired []core.StateEntry
	// Deleted counts the task-state rows deleted; Batches the statements
	// (commits) that deleted them.
	Deleted int64
	Batches int
	// The asset orphan sweep: OrphanBefore is its cut-off (the state of
	// assets inactive since before it goes; zero when
	// asset_state_orphan_retention_days is 0 and nothing is swept),
	// Orphans what a dry run would delete, OrphansDeleted what went.
	OrphanBefore   time.Time
	Orphans        []core.StateEntry
	OrphansDeleted int64
}

// Cleanup removes stale state of every kind (docs/state-store-cleanup.md):
// task state whose non-null expires_at is before now (never a never-expire
// row or a row without expiry), then the state of assets inactive for
// longer than [state_store] asset_state_orphan_retention_days (not at all
// when it is 0). Each goes in batches of state_cleanup_batch_size with a
// commit per batch until none is left (0 = one statement). With dryRun it
// lists what would go and deletes nothing.
func (s *Service) Cleanup(ctx context.Context, dryRun bool) (*CleanupReport, error) {
	rep := &CleanupReport{Before: s.clock.Now(), DryRun: dryRun}
	var err error
	rep.Expired, rep.Deleted, rep.Batches, err = s.sweep(ctx, core.StateTask, rep.Before, dryRun)
	if err != nil {
		return rep, err
	}
	if days := s.cfg.AssetOrphanRetentionDays; days > 0 {
		rep.OrphanBefore = rep.Before.AddDate(0, 0, -days)
		rep.Orphans, rep.OrphansDeleted, _, err = s.sweep(ctx, core.StateAsset, rep.OrphanBefore, dryRun)
	}
	return rep, err
}

// sweep removes (or, dry, lists) the stale state of one kind with cut-off
// before, in batches.
func (s *Service) sweep(ctx context.Context, kind core.StateKind, before time.Time, dryRun bool) (listed []core.StateEntry, deleted int64, batches int, err error) {
	p := &store.StateStaleParams{Kind: kind, Before: before}
	if dryRun {
		listed, err = s.st.StateStale(ctx, p)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s state cleanup (dry run): %w", kind, err)
		}
		return listed, 0, 0, nil
	}
	deleted, batches, err = inBatches(ctx, s.cfg.CleanupBatchSize, func(batch int) (int64, error) {
		p.Limit = batch
		return s.st.StateDeleteStale(ctx, p)
	})
	if err != nil {
		return nil, deleted, batches, fmt.Errorf("%s state cleanup after %d rows in %d batches: %w", kind, deleted, batches, err)
	}
	return nil, deleted, batches, nil
}

// maxBatchPause bounds the pause between two batches.
const maxBatchPause = time.Second

// inBatches calls del (one statement, one commit) until it deletes fewer
// rows than a batch, or once when batch is 0. Between batches it pauses
// for as long as the batch took: writers waiting for the database (SQLite's
// single write lock, whose busy handler naps up to 100 ms between tries)
// get their turn instead of finding the lock taken again at once, so a
// cleanup run by another process never holds them much longer than one
// batch (docs/benchmarks.md, "State store").
func inBatches(ctx context.Context, batch int, del func(batch int) (int64, error)) (deleted int64, batches int, err error) {
	for {
		start := time.Now()
		n, err := del(batch)
		if err != nil {
			return deleted, batches, err
		}
		deleted += n
		batches++
		if batch <= 0 || n < int64(batch) {
			return deleted, batches, nil
		}
		select {
		case <-ctx.Done():
			return deleted, batches, ctx.Err()
		case <-time.After(min(time.Since(start), maxBatchPause)):
		}
	}
}

// Cleaner runs Cleanup every Interval ([state_store] cleanup_interval, off
// by default); the scheduler role runs it. With a zero Interval it does
// nothing until its context ends.
type Cleaner struct {
	Service  *Service
	Interval time.Duration
	Logger   *slog.Logger // nil = discard
}

// Start runs cleanups until ctx is done. A failed cleanup is logged and
// tried again at the next interval.
func (c *Cleaner) Start(ctx context.Context) error {
	if c.Interval <= 0 {
		<-ctx.Done()
		return nil
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		rep, err := c.Service.Cleanup(ctx, false)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Error("task state cleanup failed", "err", err)
			continue
		}
		if rep.Deleted > 0 || rep.OrphansDeleted > 0 {
			log.Info("task state cleanup", "deleted", rep.Deleted, "batches", rep.Batches,
				"orphaned_asset_state_deleted", rep.OrphansDeleted)
		}
	}
}
