package weir

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// goBatchPipeline runs examples/sdk's batch pipeline under `bin standalone`
// on engine (sqlite or postgres) as a user would (docs/emission.md): a run
// of go_emit_batches, whose ingest emits an event of go_batches per batch
// with tc.Emit, starts one run of go_batches_consumer per partition —
// batch-1..3, each from its own event — and one for the outlet's keyless
// event of ingest's success; every consumer run succeeds.
func goBatchPipeline(t *testing.T, bin, engine string) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	api, c, stderr := standaloneServing(ctx, t, bin, engine, "go_emit_batches", "go_batches_consumer")
	call(t, c, http.MethodPost, api+"/dags/go_emit_batches/dagRuns", `{"dag_run_id": "batches"}`, nil)
	poll(ctx, t, "go_emit_batches's run to end", func() bool {
		var r core.DagRun
		call(t, c, http.MethodGet, api+"/dags/go_emit_batches/dagRuns/batches", "", &r)
		if r.State == core.RunFailed {
			t.Fatalf("go_emit_batches failed\n%s", stderr.String())
		}
		return r.State == core.RunSuccess
	})

	var consumer struct {
		DagRuns []core.DagRun `json:"dag_runs"`
	}
	poll(ctx, t, "four runs of go_batches_consumer to end", func() bool {
		call(t, c, http.MethodGet, api+"/dags/go_batches_consumer/dagRuns?limit=100", "", &consumer)
		done := 0
		for _, r := range consumer.DagRuns {
			if r.State == core.RunSuccess || r.State == core.RunFailed {
				done++
			}
		}
		return done >= 4
	})
	var got []string
	for _, r := range consumer.DagRuns {
		key := "-"
		if r.PartitionKey != nil {
			key = *r.PartitionKey
		}
		got = append(got, key)
		if r.State != core.RunSuccess || r.RunType != core.RunAssetTriggered {
			t.Errorf("go_batches_consumer's run %s (partition %s) is %s %s, want an asset-triggered success", r.RunID, key, r.RunType, r.State)
		}
		var evs struct {
			AssetEvents []core.AssetEvent `json:"asset_events"`
		}
		call(t, c, http.MethodGet, api+"/dags/go_batches_consumer/dagRuns/"+r.RunID+"/upstreamAssetEvents", "", &evs)
		if len(evs.AssetEvents) != 1 {
			t.Errorf("run %s (partition %s) came from %d events, want its partition's one", r.RunID, key, len(evs.AssetEvents))
			continue
		}
		ev := evs.AssetEvents[0]
		if ev.Name != "go_batches" || (ev.PartitionKey == nil) != (r.PartitionKey == nil) || (ev.PartitionKey != nil && *ev.PartitionKey != key) ||
			ev.SourceKind != core.AssetSourceTask || ev.SourceDagID != "go_emit_batches" || ev.SourceRunID != "batches" || ev.SourceTaskID != "ingest" {
			t.Errorf("run %s (partition %s) came from %+v; want ingest's event of go_batches for its partition", r.RunID, key, ev)
		}
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "- batch-1 batch-2 batch-3" {
		t.Errorf("go_batches_consumer ran for partitions %v; want batch-1..3 once each and the outlet's keyless event", got)
	}
	var xcom struct {
		Value any `json:"value"`
	}
	for _, r := range consumer.DagRuns {
		if r.PartitionKey != nil && *r.PartitionKey == "batch-2" {
			call(t, c, http.MethodGet, fmt.Sprintf("%s/dags/go_batches_consumer/dagRuns/%s/taskInstances/transform/xcomEntries/return_value", api, r.RunID), "", &xcom)
			if xcom.Value != "batch-2" {
				t.Errorf("transform in batch-2's run returned %v, want its partition key (tc.PartitionKey)", xcom.Value)
			}
		}
	}
}
