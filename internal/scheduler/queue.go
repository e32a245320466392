package scheduler

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/service"
)

// queueScheduled queues what the free slots admit (service.QueueScheduled).
// A whole pass reads the pools and keeps them for the light passes that
// follow (a pool's change or removal wakes a whole pass, as the pause
// flags' do).
func (s *Scheduler) queueScheduled(ctx context.Context, now time.Time, full bool) error {
	if full {
		s.pools = nil
	}
	res, err := s.Service.QueueScheduled(ctx, service.QueueParams{Pools: s.pools, Now: now})
	if err != nil {
		return err
	}
	s.pools = res.Pools
	s.busy = backlogBusy(s.backlog, res.Found, res.Left)
	s.backlog = res.Left
	s.tally.queued += res.Queued
	return nil
}

// backlogBusy reports whether the workers have a backlog that a light pass
// can wait behind (ADR 0034): some queue's backlog shrank since the pass
// before (left then, found now: its workers claim from it), and every queue
// that shrank still holds busyBacklog once this pass is done. A queue whose
// backlog did not shrink (no worker serves it, or its workers are all busy)
// neither counts nor prevents it.
func backlogBusy(before, found, left map[string]int) bool {
	claimed := false
	for q, n := range before {
		if found[q] >= n {
			continue
		}
		claimed = true
		if left[q] < busyBacklog {
			return false
		}
	}
	return claimed
}
