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
	s.pools, s.backlog = res.Pools, res.Claimable
	s.tally.queued += res.Queued
	return nil
}
