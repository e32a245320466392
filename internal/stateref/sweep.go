package stateref

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// DefaultSweepInterval is [workers] state_sweep_interval's default.
const DefaultSweepInterval = 30 * time.Second

// sweepBatch is how many references one claim takes.
const sweepBatch = 200

// Sweeper deletes the objects the Execution API hands to the sweep
// (docs/state-backends.md#sweeping): those of state rows that went by any
// path, of overwritten values, and of writes whose reference was never
// stored. Every worker with the backend runs one; claims are leased, so
// they share the work, and a reference whose object could not be deleted
// is claimed again once its lease lapses.
type Sweeper struct {
	Client   *execclient.Client // holds the worker credential
	Store    Objects
	Logger   *slog.Logger
	Interval time.Duration // 0 = DefaultSweepInterval
}

// Run sweeps every Interval (at once again after a full batch) until ctx
// is done.
func (s *Sweeper) Run(ctx context.Context) {
	every := s.Interval
	if every <= 0 {
		every = DefaultSweepInterval
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.SweepOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Logger.Warn("sweep state objects", "err", err)
		case n > 0:
			s.Logger.Info("swept state objects", "deleted", n)
		}
		next := every
		if n == sweepBatch {
			next = 0
		}
		t.Reset(next)
	}
}

// SweepOnce claims one batch of references, deletes their objects (an
// absent object counts as deleted) and reports the deleted ones; it
// returns how many it reported.
func (s *Sweeper) SweepOnce(ctx context.Context) (int, error) {
	refs, err := s.Client.StateObjectsClaim(ctx, sweepBatch)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	done := make([]string, 0, len(refs))
	var errs []error
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "task/") && !strings.HasPrefix(ref, "asset/") {
			s.Logger.Warn("not a state object reference: forgotten, not deleted", "ref", ref)
			done = append(done, ref)
			continue
		}
		if err := s.Store.Delete(ctx, ref); err != nil && !errors.Is(err, core.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		done = append(done, ref)
	}
	if err := s.Client.StateObjectsDone(ctx, done); err != nil {
		return 0, err
	}
	return len(done), errors.Join(errs...)
}
