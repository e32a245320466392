package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/groupcommit"
	"github.com/weirflow/weir/internal/store"
)

// maxEventBatch bounds the events one group commit records.
const maxEventBatch = 128

// newEventBatcher groups concurrent asset-event inserts into one write
// transaction (groupcommit; docs/benchmarks.md, emission). When any event
// of a group fails (an idempotency key already used, say), the group's
// transaction is rolled back and each of its events is recorded in a
// transaction of its own, so one event's error is never another's.
func newEventBatcher(s *Store) *groupcommit.Group[*eventRequest] {
	return &groupcommit.Group[*eventRequest]{Max: maxEventBatch, Commit: s.recordGroup,
		Fail: func(r *eventRequest, err error) { r.ev, r.err = nil, err }}
}

type eventRequest struct {
	p   *store.AssetEventParams
	ev  *core.AssetEvent
	err error
}

// insertEvent records p's event through s (not bound to a transaction),
// grouped with those of concurrent callers, and returns it once committed.
func (s *Store) insertEvent(ctx context.Context, p *store.AssetEventParams) (*core.AssetEvent, error) {
	r := &eventRequest{p: p}
	s.events.Do(ctx, r)
	return r.ev, r.err
}

// recordGroup begins a transaction, takes the queued events and records
// them in it; when one of several fails, it records each in its own. Each
// transaction wakes the scheduler once, with its commit (on PostgreSQL one
// NOTIFY a group, sent by the commit, instead of a statement an event).
func (s *Store) recordGroup(ctx context.Context, take func() []*eventRequest) {
	var group []*eventRequest
	err := s.inTx(ctx, func(tx *Store) error {
		group = take()
		if err := tx.recordEvents(ctx, group); err != nil {
			return err
		}
		return tx.Notify(ctx, store.ChannelScheduler)
	})
	if group == nil { // the transaction did not begin: every queued event fails with it
		group = take()
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
// is looked up once; on PostgreSQL the rows go in by multi-row INSERTs
// (insertRows); one statement an asset queues its events for its
// coalescing consumers (the range a statement per event would have
// widened the queue to); and an asset whose first event found no
// partitioned consumer is not asked again. A group with an emission through an alias, which changes the
// asset's consumers inside the transaction, is recorded an event at a
// time. On an error the group's events are left unrecorded (the caller
// rolls back).
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
		of     = make([]*assetEvents, len(group))
	)
	for i, r := range group {
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
		of[i] = q
	}
	ids, err := s.insertRows(ctx, group, func(i int) int64 { return of[i].a.ID })
	if err != nil {
		return err
	}
	for i, r := range group {
		q, id := of[i], ids[i]
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

// insertRows inserts the rows of a group's events (assetID(i) is the
// asset of the i-th) and returns their ids in the group's order. When the
// dialect groups inserts and every event has an idempotency key of its
// own — the clients make one up for each call — the rows go in by
// multi-row INSERTs of 2^k rows (a few statement texts to keep compiled),
// each id matched by its key; otherwise a statement an event.
func (s *Store) insertRows(ctx context.Context, group []*eventRequest, assetID func(i int) int64) ([]int64, error) {
	ids := make([]int64, len(group))
	at := make(map[string]int, len(group))
	for i, r := range group {
		if _, dup := at[r.p.IdempotencyKey]; !s.d.GroupInserts || r.p.IdempotencyKey == "" || dup {
			for i, r := range group {
				var err error
				if ids[i], err = s.eventRow(ctx, assetID(i), r.p); err != nil {
					return nil, err
				}
			}
			return ids, nil
		}
		at[r.p.IdempotencyKey] = i
	}
	for start := 0; start < len(group); {
		n := 1 << (bits.Len(uint(len(group)-start)) - 1) // the largest power of two that fits
		if err := s.insertChunk(ctx, group[start:start+n], start, assetID, at, ids); err != nil {
			return nil, err
		}
		start += n
	}
	return ids, nil
}

// insertChunk inserts chunk (the group's events from offset start) in one
// statement and sets each one's id in ids through its key's index in at.
func (s *Store) insertChunk(ctx context.Context, chunk []*eventRequest, start int, assetID func(i int) int64,
	at map[string]int, ids []int64) error {
	const what = "record a group of asset events"
	args := make([]any, 0, len(chunk)*assetEventArgs)
	for i, r := range chunk {
		a, err := eventArgs(assetID(start+i), r.p)
		if err != nil {
			return err
		}
		args = append(args, a...)
	}
	rows, err := s.writer().QueryContext(ctx, fmt.Sprintf(qAssetEventInsertRows, s.tuples(len(chunk), assetEventArgs)), args...)
	if err != nil {
		return s.wrap(err, what)
	}
	got, err := collect(rows, func(r *sql.Rows) (int, error) {
		var (
			id  int64
			key string
		)
		if err := r.Scan(&id, &key); err != nil {
			return 0, err
		}
		i, ok := at[key]
		if !ok {
			return 0, fmt.Errorf("the insert returned key %q, which the group does not hold", key)
		}
		ids[i] = id
		return i, nil
	})
	if err == nil && len(got) != len(chunk) {
		err = fmt.Errorf("the insert returned %d rows for %d events", len(got), len(chunk))
	}
	if err != nil {
		return s.wrap(err, what)
	}
	for _, r := range chunk {
		s.noteEvent(r.p.SourceKind)
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
