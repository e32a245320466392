package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testAssetConditionSchedule: a DAG with a conditional schedule is ready
// when its queued events meet the condition — any-of on one event, a
// nested all-of only once both sides are met — and its run consumes every
// queued event; a plain list still needs every asset.
func testAssetConditionSchedule(t *testing.T, f *fixture) {
	refunds := core.Asset{Name: "refunds", URI: "s3://lake/refunds"}
	must(t, f.assetDag(producer("prod", orders, customers, refunds), f.now), "sync producer")
	leaf := func(a core.Asset) core.AssetCondition { return core.AssetCondition{Ref: &core.AssetRef{URI: a.URI}} }
	conditional := func(dagID string, c core.AssetCondition) core.DAG {
		d := consumer(dagID, orders, customers, refunds)
		d.AssetCondition, d.AssetSchedule = &c, c.Refs()
		return d
	}
	either := core.AssetCondition{Any: []core.AssetCondition{leaf(orders), leaf(customers)}}
	must(t, f.assetDag(conditional("any_of", either), f.now), "sync any_of")
	must(t, f.assetDag(conditional("nested", core.AssetCondition{All: []core.AssetCondition{either, leaf(refunds)}}), f.now), "sync nested")
	must(t, f.assetDag(consumer("all_of", orders, customers), f.now), "sync all_of")

	ready := func(want ...string) {
		t.Helper()
		got, err := f.st.AssetQueueReady(f.ctx)
		must(t, err, "ready")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ready (-want +got):\n%s", diff)
		}
	}
	emit := func(a core.Asset) *core.AssetEvent {
		t.Helper()
		ev, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: a.Name, SourceKind: core.AssetSourceAPI, Now: f.now})
		must(t, err, "insert event of "+a.Name)
		return ev
	}
	first := emit(customers)
	ready("any_of") // customers alone: (orders | customers) yes, & refunds no, plain list no
	run := f.run("nested", "early")
	_, err := f.st.AssetQueueConsume(f.ctx, "nested", run.ID)
	wantErr(t, err, core.ErrConflict, "consume nested before refunds")
	refund := emit(refunds)
	ready("any_of", "nested")
	run = f.run("nested", "asset_triggered__1")
	got, err := f.st.AssetQueueConsume(f.ctx, "nested", run.ID)
	must(t, err, "consume nested")
	if len(got) != 2 || got[0].ID != first.ID || got[1].ID != refund.ID {
		t.Errorf("nested consumed %+v, want events %d and %d", got, first.ID, refund.ID)
	}
	ready("any_of")
	emit(orders)
	ready("all_of", "any_of")
}
