package statestore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/store"
)

// CleanupReport says what a cleanup did (or, dry, would do).
type CleanupReport struct {
	// Before is the cut-off: rows whose expires_at is earlier went.
	Before time.Time
	DryRun bool
	// Expired lists, on a dry run, every row that would go, by dag, run,
	// task, map index and key.
	Expired []store.TaskStateEntry
	// Deleted counts the rows deleted; Batches the statements (commits)
	// that deleted them.
	Deleted int64
	Batches int
}

// Cleanup deletes task-state rows whose non-null expires_at is before now,
// in batches of [state_store] state_cleanup_batch_size with a commit per
// batch until none is left (0 = one statement), and never a never-expire
// row or a row without expiry (SPEC GC-1). With dryRun it lists what would
// go and deletes nothing.
func (s *Service) Cleanup(ctx context.Context, dryRun bool) (*CleanupReport, error) {
	rep := &CleanupReport{Before: s.clock.Now(), DryRun: dryRun}
	if dryRun {
		exp, err := s.st.TaskStateExpired(ctx, rep.Before, 0)
		if err != nil {
			return nil, fmt.Errorf("task state cleanup (dry run): %w", err)
		}
		rep.Expired = exp
		return rep, nil
	}
	batch := s.cfg.CleanupBatchSize
	for {
		n, err := s.st.TaskStateDeleteExpired(ctx, rep.Before, batch)
		if err != nil {
			return rep, fmt.Errorf("task state cleanup after %d rows in %d batches: %w", rep.Deleted, rep.Batches, err)
		}
		rep.Deleted += n
		rep.Batches++
		if batch <= 0 || n < int64(batch) {
			return rep, nil
		}
	}
}

// Cleaner runs Cleanup every Interval (SPEC GC-2: [state_store]
// cleanup_interval, off by default); the scheduler role runs it. With a
// zero Interval it does nothing until its context ends.
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
		if rep.Deleted > 0 {
			log.Info("task state cleanup", "deleted", rep.Deleted, "batches", rep.Batches)
		}
	}
}
