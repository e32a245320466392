package sqlstore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// maxEventBatch bounds the events one group commit records.
const maxEventBatch = 128

// eventBatcher groups concurrent asset-event inserts into one write
// transaction (a group commit; docs/benchmarks.md, emission). The first
// caller leads: it begins a transaction, lets the goroutines that are
// ready to run have the processor once (runtime.Gosched: concurrent
// requests a few microseconds from their insert reach the queue), and only
// then takes every event queued so far — its own and those of the callers
// that arrived while it waited for the writer —, records them and commits
// once; callers that arrive meanwhile wait for the next transaction. A
// lone emission waits for nothing but the writer; no timer is involved. When any event of a group fails (an
// idempotency key already used, say), the group's transaction is rolled
// back and each of its events is recorded in a transaction of its own, so
// one event's error is never another's.
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

// take removes up to maxEventBatch events from the front of the queue.
func (b *eventBatcher) take() []*eventRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.queue), maxEventBatch)
	group := append([]*eventRequest(nil), b.queue[:n]...)
	b.queue = b.queue[n:]
	return group
}

// lead records the queued events, a group per transaction, until the
// queue is empty; after its first group it hands the rest to a goroutine,
// so that its caller returns as soon as its own event is committed.
func (b *eventBatcher) lead(ctx context.Context, s *Store) {
	s.recordGroup(ctx, b)
	b.mu.Lock()
	more := len(b.queue) > 0
	b.leading = more
	b.mu.Unlock()
	if more {
		go b.lead(ctx, s)
	}
}

// recordGroup begins a transaction, takes the queued events and records
// them in it; when one of several fails, it records each in its own. Each
// transaction wakes the scheduler once, with its commit (on PostgreSQL one
// NOTIFY a group, sent by the commit, instead of a statement an event).
func (s *Store) recordGroup(ctx context.Context, b *eventBatcher) {
	var group []*eventRequest
	defer func() {
		for _, r := range group {
			close(r.done)
		}
	}()
	err := s.inTx(ctx, func(tx *Store) error {
		runtime.Gosched() // bounded: one turn of the ready goroutines, never a timer
		group = b.take()
		if err := tx.recordEvents(ctx, group); err != nil {
			return err
		}
		return tx.Notify(ctx, store.ChannelScheduler)
	})
	if group == nil { // the transaction did not begin: every queued event fails with it
		group = b.take()
		for _, r := range group {
			r.err = err
		}
		return
	}
	if err == nil {
		return
	}
	if len(group) == 1 { // the one event's own error
		group[0].ev, group[0].err = nil, err
		return
	}
	for _, r := range group {
		r.err = s.inTx(ctx, func(tx *Store) error {
			var err error
			if r.ev, err = tx.eventRecord(ctx, r.p); err != nil {
				return err
			}
			return tx.Notify(ctx, store.ChannelScheduler)
		})
		if r.err != nil {
			r.ev = nil
		}
	}
}

// recordEvents records a group's events in the caller's transaction (s is
// bound to it) with fewer statements than an eventRecord each: each asset
// is looked up once; after every event's insert, one statement queues an
// asset's events for its coalescing consumers (the range that a statement
// per event would have widened the queue to); and an asset whose first
// event found no partitioned consumer is not asked again. A group with an
// emission through an alias, which changes the asset's consumers inside the
// transaction, is recorded an event at a time. On an error the group's
// events are left unrecorded (the caller rolls back).
func (s *Store) recordEvents(ctx context.Context, group []*eventRequest) error {
	for _, r := range group {
		if r.p.AssetID != 0 || len(r.p.Aliases) > 0 {
			return s.recordEach(ctx, group)
		}
	}
	type assetEvents struct {
		a                  *core.AssetModel
		first, last        int64
		queuedAt           time.Time
		asked, partitioned bool
	}
	var (
		byName = map[string]*assetEvents{}
		assets []*assetEvents
	)
	for _, r := range group {
		q := byName[r.p.AssetName]
		if q == nil {
			a, err := s.AssetGetByName(ctx, r.p.AssetName)
			if err != nil {
				return fmt.Errorf("record asset event: %w", err)
			}
			q = &assetEvents{a: a, queuedAt: r.p.Now}
			byName[r.p.AssetName] = q
			assets = append(assets, q)
		}
		id, err := s.eventRow(ctx, q.a.ID, r.p)
		if err != nil {
			return err
		}
		if q.first == 0 || id < q.first {
			q.first = id
		}
		q.last = max(q.last, id)
		if !q.asked || q.partitioned {
			n, err := s.enqueuePartitioned(ctx, q.a.ID, id, r.p)
			if err != nil {
				return err
			}
			q.asked, q.partitioned = true, n > 0
		}
		if r.ev, err = recordedEvent(id, q.a, r.p); err != nil {
			return err
		}
	}
	for _, q := range assets {
		if err := s.enqueueRange(ctx, q.a.ID, q.first, q.last, q.queuedAt); err != nil {
			return err
		}
	}
	return nil
}

// recordEach records a group's events one at a time, in the caller's
// transaction.
func (s *Store) recordEach(ctx context.Context, group []*eventRequest) error {
	for _, r := range group {
		var err error
		if r.ev, err = s.eventRecord(ctx, r.p); err != nil {
			return err
		}
	}
	return nil
}
