package storetest

import (
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
	got, err := f.st.AssetEventGetByIdempotencyKey(f.ctx, "k1")
	must(t, err, "get by key")
	if diff := cmp.Diff(ev, got); diff != "" {
		t.Errorf("event by key (-inserted +got):\n%s", diff)
	}
	_, err = f.st.AssetEventGetByIdempotencyKey(f.ctx, "k2")
	wantErr(t, err, core.ErrNotFound, "unknown key")

	for _, asset := range []string{"orders", "customers"} {
		_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: asset, SourceKind: core.AssetSourceTask,
			IdempotencyKey: "k1", Now: f.now})
		wantErr(t, err, core.ErrConflict, "reuse key k1 on "+asset)
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
	if n != 2 || len(byPart) != 1 || byPart[0].ID != ev.ID {
		t.Errorf("%d events, by partition %s: %+v; want 2 events (the conflicts created none), one in the partition", n, part, byPart)
	}
	q, err := f.st.AssetQueueList(f.ctx, "cons")
	must(t, err, "queue")
	if len(q) != 1 || q[0].FirstEventID != ev.ID || q[0].LastEventID != api.ID {
		t.Errorf("queue of cons = %+v, want events %d..%d of orders", q, ev.ID, api.ID)
	}
}
