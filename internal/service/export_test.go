package service

import (
	"context"

	"github.com/weirflow/weir/internal/store"
)

// CommitEndGroup records the ends records do as one group (commitEnds)
// and returns each one's error.
func (s *Service) CommitEndGroup(ctx context.Context, records ...func(tx store.Store) error) []error {
	group := make([]*endRequest, len(records))
	for i, record := range records {
		group[i] = &endRequest{record: record}
	}
	s.commitEnds(ctx, func() []*endRequest { return group })
	errs := make([]error, len(group))
	for i, r := range group {
		errs[i] = r.err
	}
	return errs
}
