package sqlstore

import (
	"context"
	"sync"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// maxEventBatch bounds the events one group commit records.
const maxEventBatch = 128

// eventBatcher groups concurrent asset-event inserts into one write
// transaction (a group commit; docs/benchmarks.md, emission): the first
// caller leads and records its own event at once; callers that arrive
// while a transaction runs wait for the next one, which records all of
// them and commits once. A lone emission waits for nothing. When any
// event of a group fails (an idempotency key already used, say), the
// group's transaction is rolled back and each of its events is recorded
// in a transaction of its own, so one event's error is never another's.
type eventBatcher struct {
	mu      sync.Mutex
	queue   []*eventRequest
	leading bool
}

type eventRequest struct {
	p    *store.AssetEventParams
	ev   *core.AssetEvent
	err  error
	done chan struct{}
}

// insert records p's event through s (not bound to a transaction),
// grouped with those of concurrent callers, and returns it once committed.
func (b *eventBatcher) insert(ctx context.Context, s *Store, p *store.AssetEventParams) (*core.AssetEvent, error) {
	r := &eventRequest{p: p, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	lead := !b.leading
	b.leading = true
	b.mu.Unlock()
	if lead {
		b.lead(context.WithoutCancel(ctx), s)
	}
	<-r.done
	return r.ev, r.err
}

// lead records the queued events, a group per transaction, until the
// queue is empty; after its first group it hands the rest to a goroutine,
// so that its caller returns as soon as its own event is committed.
func (b *eventBatcher) lead(ctx context.Context, s *Store) {
	b.mu.Lock()
	n := min(len(b.queue), maxEventBatch)
	group := append([]*eventRequest(nil), b.queue[:n]...)
	b.queue = b.queue[n:]
	b.mu.Unlock()
	s.recordGroup(ctx, group)
	b.mu.Lock()
	more := len(b.queue) > 0
	b.leading = more
	b.mu.Unlock()
	if more {
		go b.lead(ctx, s)
	}
}

// recordGroup records group's events in one transaction, or, when one of
// them fails, each in its own.
func (s *Store) recordGroup(ctx context.Context, group []*eventRequest) {
	defer func() {
		for _, r := range group {
			close(r.done)
		}
	}()
	if len(group) > 1 {
		err := s.inTx(ctx, func(tx *Store) error {
			for _, r := range group {
				if r.ev, r.err = tx.eventRecord(ctx, r.p); r.err != nil {
					return r.err
				}
			}
			return nil
		})
		if err == nil {
			return
		}
	}
	for _, r := range group {
		r.err = s.inTx(ctx, func(tx *Store) error {
			var err error
			r.ev, err = tx.eventRecord(ctx, r.p)
			return err
		})
		if r.err != nil {
			r.ev = nil
		}
	}
}
