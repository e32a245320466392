package service

import (
	"context"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// GroupedEnd is one end for CommitEndGroup: Record in the caller's Ctx.
type GroupedEnd struct {
	Ctx    context.Context
	Record func(tx store.Store) error
}

// CommitEndGroup records ends as one group (commitEnds) and returns each
// one's error.
func (s *Service) CommitEndGroup(ctx context.Context, ends ...GroupedEnd) []error {
	group := make([]*endRequest, len(ends))
	for i, e := range ends {
		group[i] = &endRequest{ctx: e.Ctx, record: e.Record}
	}
	s.commitEnds(ctx, func() []*endRequest { return group })
	errs := make([]error, len(group))
	for i, r := range group {
		errs[i] = r.err
	}
	return errs
}

// PendingEnds is how many try ends wait for a group commit.
func (s *Service) PendingEnds() int { return s.ends.Pending() }

// QueueWithFresh runs a queueing pass as a try's end does (queueLocked)
// with fresh, instances still in state none, read as scheduled.
func (s *Service) QueueWithFresh(ctx context.Context, fresh []core.TaskInstance) (QueueResult, error) {
	var res QueueResult
	err := s.st.WithQueueLock(ctx, func(tx store.Store) error {
		q, err := s.readQueueing(ctx, tx, nil, nil)
		if err != nil {
			return err
		}
		res, err = s.queueLocked(ctx, tx, q, false, fresh)
		return err
	})
	return res, err
}
