package scheduler

import (
	"context"

	"github.com/weirflow/weir/internal/service"
)

// queueScheduled queues what the free slots admit (service.QueueScheduled).
// A whole pass reads the pools and keeps them for the light passes that
// follow (a pool's change or removal wakes a whole pass, as the pause
// flags' do).
func (s *Scheduler) queueScheduled(ctx context.Context, full bool) error {
	if full {
		s.pools = nil
	}
	res, err := s.Service.QueueScheduled(ctx, service.QueueParams{Pools: s.pools})
	if err != nil {
		return err
	}
	s.pools = res.Pools
	if s.claimed == nil { // the wake-up's first queueing: what workers claimed since the last wake-up
		s.claimed = claimedFrom(s.backlog, res.Found)
	}
	s.busy = backlogBusy(s.claimed, res.Left)
	s.backlog = res.Left
	s.tally.queued += res.Queued
	return nil
}

// claimedFrom returns the queues whose backlog shrank between before (what
// a queueing left) and found (what the next one found): those whose workers
// claim from it. Instances cancelled or failed out of the queue count too
// (a rare, one-pass error).
func claimedFrom(before, found map[string]int) []string {
	claimed := []string{}
	for q, n := range before {
		if found[q] < n {
			claimed = append(claimed, q)
		}
	}
	return claimed
}

// backlogBusy reports whether the workers have a backlog that a light pass
// can wait behind (ADR 0034): they claim from some queue, and every queue
// they claim from still holds busyBacklog (left). A queue whose backlog did
// not shrink (no worker serves it, or its workers are all busy) neither
// counts nor prevents it.
func backlogBusy(claimed []string, left map[string]int) bool {
	for _, q := range claimed {
		if left[q] < busyBacklog {
			return false
		}
	}
	return len(claimed) > 0
}
