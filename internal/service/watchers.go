package service

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// Bounds on what one watcher poll commits (docs/watchers.md#limits).
const (
	MaxWatchEventBytes    = 64 << 10 // one event's extra
	MaxWatchCursorBytes   = 64 << 10 // one cursor
	MaxWatchPartitionKey  = 250      // characters
	MaxWatchEventsPerPoll = 10000
)

// CommitWatch records what one poll of watcher trigger p.TriggerID found:
// its events (queued for their consumers) and cursors commit together
// behind the triggerer's hold on the trigger, or nothing does
// (store.WatcherCommit). Sizes are checked first (core.ErrInvalid, nothing
// written); the scheduler is woken when events were recorded.
func (s *Service) CommitWatch(ctx context.Context, p *store.WatcherCommitParams) (*store.WatcherCommitResult, error) {
	if err := checkWatch(p); err != nil {
		return nil, fmt.Errorf("commit poll of trigger %d: %w", p.TriggerID, err)
	}
	p.Now = s.clock.Now()
	res, err := s.st.WatcherCommit(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(res.EventIDs) > 0 {
		s.notify(ctx, store.ChannelScheduler)
	}
	return res, nil
}

// checkWatch bounds a poll's commit.
func checkWatch(p *store.WatcherCommitParams) error {
	if len(p.Events) > MaxWatchEventsPerPoll {
		return fmt.Errorf("%d events in one poll, more than the limit of %d (commit in smaller batches): %w",
			len(p.Events), MaxWatchEventsPerPoll, core.ErrInvalid)
	}
	for i := range p.Events {
		e := &p.Events[i]
		if len(e.Extra) > MaxWatchEventBytes {
			return fmt.Errorf("an event of asset %d is %d bytes, more than the limit of %d: %w",
				e.AssetID, len(e.Extra), MaxWatchEventBytes, core.ErrInvalid)
		}
		if e.PartitionKey != nil && (*e.PartitionKey == "" || utf8.RuneCountInString(*e.PartitionKey) > MaxWatchPartitionKey) {
			return fmt.Errorf("partition key %.40q must be 1 to %d characters: %w", *e.PartitionKey, MaxWatchPartitionKey, core.ErrInvalid)
		}
	}
	for i := range p.Cursors {
		c := &p.Cursors[i]
		if len(c.Value) > MaxWatchCursorBytes {
			return fmt.Errorf("the cursor of watcher %q is %d bytes, more than the limit of %d: %w",
				c.Watcher, len(c.Value), MaxWatchCursorBytes, core.ErrInvalid)
		}
		v, err := statevalue.ParseValue(c.Value)
		if err != nil {
			return fmt.Errorf("the cursor of watcher %q: %w", c.Watcher, err)
		}
		c.Value = v
	}
	return nil
}

// ReportWatcherPolls records polls in the watchers' health.
func (s *Service) ReportWatcherPolls(ctx context.Context, polls []store.WatcherPoll) error {
	return s.st.WatcherReportPolls(ctx, polls)
}
