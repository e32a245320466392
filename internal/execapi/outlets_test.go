package execapi_test

import (
	"context"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// TestSuccessRecordsOutletEvents: reporting success over HTTP records one
// event per concrete outlet (aliases none) with the try's provenance and
// queues it for the DAGs scheduled on the asset; a failure records none.
func TestSuccessRecordsOutletEvents(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	assets := []core.Asset{{Name: "orders", URI: "s3://lake/orders"}, {Name: "raw", URI: "s3://lake/raw"}}
	dag := core.DAG{DagID: "prod", Assets: assets, Tasks: []core.Task{
		{TaskID: "a", Operator: "noop", Inlets: []core.AssetRef{{Name: "raw"}},
			Outlets: []core.AssetRef{{Name: "orders"}, {URI: "s3://lake/orders"}, {Alias: "dyn"}}},
		{TaskID: "b", Operator: "noop", Outlets: []core.AssetRef{{Name: "raw"}}},
	}}
	cons := core.DAG{DagID: "cons", Assets: assets[:1], AssetSchedule: []core.AssetRef{{Name: "orders"}},
		Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
	wls := runAssetDags(t, env, dag, cons)
	if _, err := taskClient(env, wls["a"]).SetState(ctx, wls["a"].TI.ID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if _, err := taskClient(env, wls["b"]).SetState(ctx, wls["b"].TI.ID, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	evs, err := env.Store.AssetEventList(ctx, &store.AssetEventListParams{SourceDagID: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("events = %+v, want exactly one: orders from a (named twice, alias none; b failed)", evs)
	}
	ev := evs[0]
	if ev.Name != "orders" || ev.SourceKind != core.AssetSourceTask || ev.SourceRunID != "r1" || ev.SourceTaskID != "a" ||
		ev.SourceMapIndex != core.NoMapIndex || ev.SourceTryNumber != 1 {
		t.Errorf("event = %+v, want orders from prod/r1/a[-1] try 1", ev)
	}
	if ready, _ := env.Store.AssetQueueReady(ctx); len(ready) != 1 || ready[0] != "cons" {
		t.Errorf("dags ready for an asset-triggered run = %v, want [cons]", ready)
	}
}

// runAssetDags seeds run r1 of dag (every task queued), records the
// consumer DAG cons, records both DAGs' assets, and claims and starts every
// task of r1; it returns the workloads by task id.
func runAssetDags(t testing.TB, env *execapitest.Env, dag, cons core.DAG) map[string]execclient.Workload {
	t.Helper()
	ctx := t.Context()
	env.SeedRun(t, dag, "r1", "")
	if _, _, err := env.Store.DagSync(ctx, &store.DagSyncParams{Spec: cons, Hash: "c", Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*core.DAG{&dag, &cons} {
		if err := env.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: d, Now: env.Clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	wls := claimAll(t, env, len(dag.Tasks))
	for id, wl := range wls {
		if _, err := taskClient(env, wl).Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
	}
	return wls
}
