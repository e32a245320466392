package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testAssetPartitionRuns: a per-partition DAG is ready for a partition key
// once that key's events meet its schedule (all of its assets), a
// per-event DAG for each event; consuming a group takes only its events,
// once; a run carries its partition key; a DAG that changes mode keeps
// what was queued.
func testAssetPartitionRuns(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	partitioned := func(dagID string, mode core.AssetRunMode, assets ...core.Asset) core.DAG {
		d := consumer(dagID, assets...)
		d.AssetRuns = mode
		return d
	}
	must(t, f.assetDag(partitioned("per_part", core.AssetRunsPerPartition, orders, customers), f.now), "sync per_part")
	must(t, f.assetDag(partitioned("per_event", core.AssetRunsPerEvent, orders), f.now), "sync per_event")
	must(t, f.assetDag(consumer("coalesce", orders), f.now), "sync coalesce")

	emit := func(a core.Asset, key string) int64 {
		t.Helper()
		p := &store.AssetEventParams{AssetName: a.Name, SourceKind: core.AssetSourceAPI, Now: f.now}
		if key != "" {
			p.PartitionKey = &key
		}
		ev, err := f.st.AssetEventInsert(f.ctx, p)
		must(t, err, "insert event of "+a.Name)
		return ev.ID
	}
	ready := func(want ...store.AssetRunGroup) {
		t.Helper()
		got, err := f.st.AssetPartitionReady(f.ctx, 1000)
		must(t, err, "partition ready")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("partition groups ready (-want +got):\n%s", diff)
		}
	}
	o1 := emit(orders, "k1")
	o2 := emit(orders, "k2")
	o3 := emit(orders, "k1")
	c1 := emit(customers, "k1")
	o4 := emit(orders, "")
	perEvent := func(id int64, key string) store.AssetRunGroup {
		return store.AssetRunGroup{DagID: "per_event", Mode: core.AssetRunsPerEvent, PartitionKey: key, EventID: id}
	}
	k1 := store.AssetRunGroup{DagID: "per_part", Mode: core.AssetRunsPerPartition, PartitionKey: "k1", EventID: o1}
	// k2 and the keyless event have no customers event: per_part waits.
	ready(perEvent(o1, "k1"), k1, perEvent(o2, "k2"), perEvent(o3, "k1"), perEvent(o4, ""))
	coalesced, err := f.st.AssetQueueReady(f.ctx)
	must(t, err, "coalesce ready")
	if diff := cmp.Diff([]string{"coalesce"}, coalesced); diff != "" {
		t.Errorf("coalescing dags ready (-want +got):\n%s", diff)
	}

	key := "k1"
	run, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "per_part", RunID: "asset_triggered__k1",
		RunType: core.RunAssetTriggered, State: core.RunQueued, DagVersionID: f.dag("per_part"), Now: f.now, PartitionKey: &key})
	must(t, err, "create partition run")
	got, err := f.st.AssetPartitionConsume(f.ctx, &k1, run.ID)
	must(t, err, "consume k1")
	var ids []int64
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if diff := cmp.Diff([]int64{o1, o3, c1}, ids); diff != "" {
		t.Errorf("k1's run consumed (-want +got):\n%s", diff)
	}
	back, err := f.st.DagRunGet(f.ctx, "per_part", "asset_triggered__k1")
	must(t, err, "read the run back")
	if back.PartitionKey == nil || *back.PartitionKey != "k1" {
		t.Errorf("run's partition key = %v, want k1", back.PartitionKey)
	}
	_, err = f.st.AssetPartitionConsume(f.ctx, &k1, run.ID)
	wantErr(t, err, core.ErrConflict, "consume k1 twice")

	ev := perEvent(o2, "k2")
	run2 := f.run("per_event", "asset_triggered__e2")
	got, err = f.st.AssetPartitionConsume(f.ctx, &ev, run2.ID)
	must(t, err, "consume one event")
	if len(got) != 1 || got[0].ID != o2 {
		t.Errorf("per-event run consumed %+v, want only event %d", got, o2)
	}
	ready(perEvent(o1, "k1"), perEvent(o3, "k1"), perEvent(o4, ""))

	// coalesce → per_event keeps its queued events, one group each; and back.
	must(t, f.assetDag(partitioned("coalesce", core.AssetRunsPerEvent, orders), f.now), "make coalesce per_event")
	switched := func(id int64, key string) store.AssetRunGroup {
		return store.AssetRunGroup{DagID: "coalesce", Mode: core.AssetRunsPerEvent, PartitionKey: key, EventID: id}
	}
	ready(switched(o1, "k1"), perEvent(o1, "k1"), switched(o2, "k2"), switched(o3, "k1"), perEvent(o3, "k1"),
		switched(o4, ""), perEvent(o4, ""))
	must(t, f.assetDag(consumer("coalesce", orders), f.now), "make it coalesce again")
	ready(perEvent(o1, "k1"), perEvent(o3, "k1"), perEvent(o4, ""))
	entries, err := f.st.AssetQueueList(f.ctx, "coalesce")
	must(t, err, "queue of coalesce")
	if len(entries) != 1 || entries[0].FirstEventID != o1 || entries[0].LastEventID != o4 {
		t.Errorf("coalesce's queue after two switches = %+v, want orders' events %d..%d", entries, o1, o4)
	}
}
