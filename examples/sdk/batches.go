package main

import (
	"context"
	"fmt"

	"github.com/weirflow/weir"
)

// goBatches is the asset the Go batch pipeline publishes one event per
// batch of.
var goBatches = weir.Asset("go_batches", weir.AssetURI("file:///tmp/weir-example/go_batches"))

// batchesDAG is the batch pipeline in Go, like examples/dags/emit_batches.yaml:
// ingest emits an event of go_batches per committed batch, with a key per
// run and batch, so a retry that emits a batch again gets the first
// event's receipt instead of a second event (docs/emission.md).
func batchesDAG() *weir.DAG {
	dag := weir.NewDAG("go_emit_batches",
		weir.Description("Ingests three batches and publishes each one as it commits."),
		weir.Tags("example", "go", "emission"),
	)
	dag.Go("ingest", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		for n := 1; n <= 3; n++ {
			tc.Logger.Info("committing batch", "batch", n) // write the batch here
			rec, err := tc.Emit(ctx, goBatches, weir.PartitionKey(fmt.Sprintf("batch-%d", n)),
				weir.IdempotencyKey(fmt.Sprintf("go_emit_batches/%s/batch-%d", tc.RunID, n)),
				weir.EventExtra(map[string]any{"batch": n}))
			if err != nil {
				return nil, err // the batches already emitted stay; a retry repeats their keys
			}
			tc.Logger.Info("published", "event_id", rec.EventID, "duplicate", rec.Duplicate)
		}
		return nil, nil
	}, weir.Outlets(goBatches), weir.Retries(2))
	return dag
}

// batchesConsumerDAG runs once per partition key of go_batches
// (RunPerPartition): each run transforms its own batch.
func batchesConsumerDAG() *weir.DAG {
	dag := weir.NewDAG("go_batches_consumer",
		weir.Description("Transforms each batch in a run of its own."),
		weir.Tags("example", "go", "emission"),
		weir.ScheduleOnAssets(goBatches), weir.RunPerPartition(),
	)
	dag.Go("transform", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		if tc.PartitionKey() == "" {
			tc.Logger.Info("the producer's success event (no batch): nothing to transform")
			return nil, nil
		}
		tc.Logger.Info("transforming", "partition", tc.PartitionKey(), "events", len(tc.TriggeringAssetEvents()))
		return tc.PartitionKey(), nil
	}, weir.Inlets(goBatches))
	return dag
}
