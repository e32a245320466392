package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testAssetEventEmissionFields: an event keeps its partition date,
// idempotency key and source user; a key names one event (a second insert
// with it is a conflict that creates nothing, whatever the asset); events
// filter by partition key.
func testAssetEventEmissionFields(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	part := "batch-1"
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	ev, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceTask,
		PartitionKey: &part, PartitionDate: &date, IdempotencyKey: "k1", SourceDagID: "prod", SourceRunID: "r1",
		SourceTaskID: "load", SourceMapIndex: core.NoMapIndex, SourceTryNumber: 1, Now: f.now})
	must(t, err, "insert with partition and key")
	if ev.PartitionDate == nil || !ev.PartitionDate.Equal(date) || ev.IdempotencyKey != "k1" || *ev.PartitionKey != part {
		t.Errorf("event = %+v, want partition %s dated %s with key k1", ev, part, date)
	}
	got, err := f.st.AssetEventGetByIdempotencyKey(f.ctx, ev.AssetID, "k1")
	must(t, err, "get by key")
	if diff := cmp.Diff(ev, got); diff != "" {
		t.Errorf("event by key (-inserted +got):\n%s", diff)
	}
	_, err = f.st.AssetEventGetByIdempotencyKey(f.ctx, ev.AssetID, "k2")
	wantErr(t, err, core.ErrNotFound, "unknown key")

	// A key names one event of its asset: another asset's k1 is its own.
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceTask,
		IdempotencyKey: "k1", Now: f.now})
	wantErr(t, err, core.ErrConflict, "reuse key k1 on orders")
	other, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "customers", SourceKind: core.AssetSourceTask,
		IdempotencyKey: "k1", Now: f.now})
	must(t, err, "key k1 on customers")
	if got, err := f.st.AssetEventGetByIdempotencyKey(f.ctx, other.AssetID, "k1"); err != nil || got.ID != other.ID {
		t.Errorf("customers' k1 = %+v, %v; want event %d", got, err, other.ID)
	}
	api, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI,
		SourceUser: "alice", Now: f.now})
	must(t, err, "insert an API user's event")
	if api.SourceUser != "alice" || api.PartitionDate != nil || api.IdempotencyKey != "" {
		t.Errorf("API event = %+v, want source user alice and no partition date or key", api)
	}
	if stored, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{AssetID: api.AssetID}); err != nil {
		t.Fatalf("list: %v", err)
	} else if diff := cmp.Diff(api, &stored[len(stored)-1]); diff != "" {
		t.Errorf("the API event as inserted and as stored (-inserted +stored):\n%s", diff)
	}
	n, err := f.st.AssetEventCount(f.ctx, &store.AssetEventListParams{})
	must(t, err, "count")
	byPart, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{PartitionKey: part})
	must(t, err, "list by partition")
	if n != 3 || len(byPart) != 1 || byPart[0].ID != ev.ID {
		t.Errorf("%d events, by partition %s: %+v; want 3 events (the conflict created none), one in the partition", n, part, byPart)
	}
	q, err := f.st.AssetQueueList(f.ctx, "cons")
	must(t, err, "queue")
	if len(q) != 1 || q[0].FirstEventID != ev.ID || q[0].LastEventID != api.ID {
		t.Errorf("queue of cons = %+v, want events %d..%d of orders", q, ev.ID, api.ID)
	}
}

// testAssetEventConcurrentInserts: concurrent inserts (which the SQL
// store groups into shared commits) each record their own event or fail
// alone: an idempotency key used twice in one burst makes one event and
// one conflict, and every other insert of the burst is recorded and
// queued for the consumer.
func testAssetEventConcurrentInserts(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("burst-%d", i)
			if i%10 == 9 {
				key = "burst-0" // a key the burst already uses
			}
			part := fmt.Sprintf("p%d", i)
			if i%10 == 9 {
				part = "p0"
			}
			_, errs[i] = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceTask,
				PartitionKey: &part, IdempotencyKey: key, SourceDagID: "prod", SourceRunID: "r1", SourceTaskID: "load",
				SourceMapIndex: core.NoMapIndex, SourceTryNumber: 1, Now: f.now})
		})
	}
	wg.Wait()
	conflicts := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, core.ErrConflict) && (i == 0 || i%10 == 9):
			conflicts++
		default:
			t.Errorf("insert %d: %v", i, err)
		}
	}
	count, err := f.st.AssetEventCount(f.ctx, &store.AssetEventListParams{})
	must(t, err, "count")
	if conflicts != 4 || count != n-4 {
		t.Errorf("%d events and %d conflicts, want %d events and 4 conflicts (one per reuse of burst-0)", count, conflicts, n-4)
	}
	q, err := f.st.AssetQueueList(f.ctx, "cons")
	must(t, err, "queue")
	if len(q) != 1 || q[0].LastEventID-q[0].FirstEventID < int64(n-5) {
		t.Errorf("queue of cons = %+v, want every event of the burst", q)
	}
}

// testAssetEventBurstQueued: a burst of concurrent inserts of two assets
// (recorded in shared commits by multi-row INSERTs, an asset looked up
// and queued once a commit) returns each insert its own event as stored,
// and queues every event for the consumers of its own asset: each
// coalescing DAG's range spans exactly its asset's events, and the
// per-event DAG of one asset gets a group for each of that asset's events
// and none for the other's.
func testAssetEventBurstQueued(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons_orders", orders), f.now), "sync cons_orders")
	must(t, f.assetDag(consumer("cons_customers", customers), f.now), "sync cons_customers")
	perEvent := consumer("per_event", orders)
	perEvent.AssetRuns = core.AssetRunsPerEvent
	must(t, f.assetDag(perEvent, f.now), "sync per_event")
	const n = 40
	events := make([]*core.AssetEvent, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			asset, part := []string{"customers", "orders"}[i%2], fmt.Sprintf("p%d", i)
			ev, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: asset, SourceKind: core.AssetSourceTask,
				PartitionKey: &part, IdempotencyKey: fmt.Sprintf("burst-%d", i), SourceDagID: "prod", SourceRunID: "r1",
				SourceTaskID: "load", SourceMapIndex: core.NoMapIndex, SourceTryNumber: 1, Now: f.now})
			if err != nil {
				t.Errorf("insert %d: %v", i, err)
				return
			}
			if ev.Name != asset || ev.PartitionKey == nil || *ev.PartitionKey != part {
				t.Errorf("insert %d: event %+v, want asset %s, partition %s", i, ev, asset, part)
			}
			events[i] = ev
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, ev := range events {
		stored, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{PartitionKey: fmt.Sprintf("p%d", i)})
		must(t, err, "list by partition")
		if len(stored) != 1 || stored[0].ID != ev.ID || stored[0].Name != ev.Name || stored[0].IdempotencyKey != ev.IdempotencyKey {
			t.Errorf("insert %d: receipt says event %d of %s, stored %+v", i, ev.ID, ev.Name, stored)
		}
	}
	span := map[string][2]int64{}
	var want []store.AssetRunGroup
	for i, ev := range events {
		s, ok := span[ev.Name]
		if !ok {
			s = [2]int64{ev.ID, ev.ID}
		}
		span[ev.Name] = [2]int64{min(s[0], ev.ID), max(s[1], ev.ID)}
		if ev.Name == "orders" {
			want = append(want, store.AssetRunGroup{DagID: "per_event", Mode: core.AssetRunsPerEvent,
				PartitionKey: fmt.Sprintf("p%d", i), EventID: ev.ID})
		}
	}
	for dagID, asset := range map[string]string{"cons_orders": "orders", "cons_customers": "customers"} {
		q, err := f.st.AssetQueueList(f.ctx, dagID)
		must(t, err, "queue of "+dagID)
		if len(q) != 1 || q[0].FirstEventID != span[asset][0] || q[0].LastEventID != span[asset][1] {
			t.Errorf("queue of %s = %+v, want events %d..%d of %s", dagID, q, span[asset][0], span[asset][1], asset)
		}
	}
	got, err := f.st.AssetPartitionReady(f.ctx, 1000)
	must(t, err, "partition ready")
	sortGroups := func(a, b store.AssetRunGroup) int { return int(a.EventID - b.EventID) }
	slices.SortFunc(want, sortGroups)
	slices.SortFunc(got, sortGroups)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-event groups ready (-want +got):\n%s", diff)
	}
}

// testAssetEventInsertWakesScheduler: an event recorded outside a
// transaction wakes the scheduler with its commit (the consumer's run is
// created at once, not at the next poll); an insert that creates nothing
// (a key already used) wakes nobody.
func testAssetEventInsertWakesScheduler(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	sub := f.st.Subscribe(f.ctx, store.ChannelScheduler)
	p := &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceTask, IdempotencyKey: "wake-1",
		SourceDagID: "prod", SourceRunID: "r1", SourceTaskID: "load", SourceMapIndex: core.NoMapIndex, SourceTryNumber: 1, Now: f.now}
	_, err := f.st.AssetEventInsert(f.ctx, p)
	must(t, err, "insert")
	WaitSignal(t, sub, "scheduler wake-up after an event's commit")
	_, err = f.st.AssetEventInsert(f.ctx, p)
	wantErr(t, err, core.ErrConflict, "insert with a used key")
	if received(sub) {
		t.Error("the scheduler was woken by an insert that created nothing")
	}
}
