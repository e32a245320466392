package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// partitionProducerDAG emits batch-1..3 on its first try, waits until the
// test has seen their consumer runs succeed (the file %[1]s appears), then
// fails; its retry emits batch-1..5 with the same idempotency keys.
const partitionProducerDAG = `dag_id: batch_producer
schedule: null
assets:
  - {name: batches, uri: "file:///tmp/weir-e2e/partitioned_batches"}
tasks:
  ingest:
    operator: bash
    retries: 1
    retry_delay: 1s
    outlets: [batches]
    bash_command: |
      last=3; [ "$WEIR_TRY_NUMBER" = 2 ] && last=5
      for n in $(seq 1 $last); do
        weir assets emit --name batches --partition-key "batch-$n" --idempotency-key "ingest/batch-$n" || exit 9
      done
      if [ "$WEIR_TRY_NUMBER" = 1 ]; then
        while [ ! -e %[1]s ]; do sleep 0.05; done
        exit 1
      fi
`

// partitionConsumerDAG runs once per partition key of batches.
const partitionConsumerDAG = `dag_id: batch_consumer
schedule: [batches]
asset_runs: per_partition
assets:
  - {name: batches, uri: "file:///tmp/weir-e2e/partitioned_batches"}
tasks:
  load:
    operator: bash
    bash_command: |
      echo "partition={{ .partition_key }} env=$WEIR_PARTITION_KEY events={{ range .triggering_asset_events }}{{ .partition_key }},{{ end }}"
`

// partitionRuns waits for the first n asset-triggered runs of a DAG with
// asset_runs per_partition to succeed and returns them by partition key
// ("-" for none); each must have consumed the one event of its partition,
// and no partition may have two runs.
func (c *client) partitionRuns(dagID string, n int) map[string]core.DagRun {
	c.T.Helper()
	out := map[string]core.DagRun{}
	for i := 1; i <= n; i++ {
		run, evs := c.waitAssetRun(dagID, i)
		key := partitionOf(run.PartitionKey)
		if _, dup := out[key]; dup {
			c.T.Errorf("two runs of %s for partition %s", dagID, key)
		}
		out[key] = run
		if len(evs) != 1 || (evs[0].PartitionKey == nil) != (run.PartitionKey == nil) ||
			(run.PartitionKey != nil && *evs[0].PartitionKey != key) {
			c.T.Errorf("run %s of %s (partition %s) consumed %+v, want the one event of its partition", run.RunID, dagID, key, evs)
		}
	}
	return out
}

// TestPartitionedRuns is docs/requirements.md#e's first "done when" on
// both engines: a task emits batch-1..3 and fails, and three consumer runs,
// one per partition, run and succeed; its retry emits batch-1..5 with the
// same idempotency keys and only batch-4 and batch-5 make events and runs
// (besides the keyless run of the success's outlet event). Each run
// carries its partition key in REST, templates, the environment and
// `weir runs list`; a manual run takes one from `weir dags trigger`.
func TestPartitionedRuns(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		home, dags := t.TempDir(), t.TempDir()
		release := filepath.Join(t.TempDir(), "release")
		writeFile(t, filepath.Join(dags, "producer.yaml"), fmt.Sprintf(partitionProducerDAG, release))
		writeFile(t, filepath.Join(dags, "consumer.yaml"), partitionConsumerDAG)
		s := startStandalone(t, home, dags, env...)
		api := s.api.with(t)
		api.WaitDAG("batch_producer")
		api.WaitDAG("batch_consumer")

		api.Trigger("batch_producer", "p1", nil)
		first := api.partitionRuns("batch_consumer", 3)
		if got := slices.Sorted(maps.Keys(first)); strings.Join(got, " ") != "batch-1 batch-2 batch-3" {
			t.Fatalf("after the first try's emissions, consumer runs for %v; want batch-1..3", got)
		}
		if ti := api.TaskInstance("batch_producer", "p1", "ingest"); ti.TryNumber != 1 || ti.State != core.TIRunning {
			t.Fatalf("the producer's first try is %s (try %d); want it still running while its consumers ran", ti.State, ti.TryNumber)
		}
		if err := os.WriteFile(release, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		api.WaitRunSuccess("batch_producer", "p1")
		if tries := api.Tries("batch_producer", "p1", "ingest"); len(tries) != 2 || tries[0].State != core.TIFailed {
			t.Errorf("producer tries %+v; want a failed first try and a retry", tries)
		}

		all := api.partitionRuns("batch_consumer", 6)
		if got := slices.Sorted(maps.Keys(all)); strings.Join(got, " ") != "- batch-1 batch-2 batch-3 batch-4 batch-5" {
			t.Errorf("consumer runs for partitions %v; want batch-1..5 once each and the outlet's keyless event", got)
		}
		for key, run := range first {
			if all[key].RunID != run.RunID {
				t.Errorf("partition %s ran again (%s, then %s); want the retry's repeated key to make nothing", key, run.RunID, all[key].RunID)
			}
		}
		if evs := api.assetEvents("batches"); len(evs) != 6 {
			t.Errorf("batches has %d events, want 6 (batch-1..5 and the outlet's)", len(evs))
		}
		log := api.Log("batch_consumer", all["batch-4"].RunID, "load", 1)
		if !strings.Contains(log, "partition=batch-4 env=batch-4 events=batch-4,\n") {
			t.Errorf("batch-4's run log lacks its partition in the template, the environment and its events:\n%s", log)
		}

		weir := func(args ...string) result { return runWeir(t, env, append(args, "--home", home)...) }
		if r := weir("runs", "list", "--dag", "batch_consumer"); r.Code != 0 || !strings.Contains(r.Stdout, "PARTITION") ||
			!strings.Contains(r.Stdout, " batch-5 ") {
			t.Errorf("runs list: %s; want a PARTITION column with batch-5", r)
		}
		if r := weir("dags", "trigger", "batch_consumer", "--run-id", "by-hand", "--partition-key", "batch-7"); r.Code != 0 {
			t.Fatalf("dags trigger --partition-key: %s", r)
		}
		run := api.WaitRunSuccess("batch_consumer", "by-hand")
		if run.PartitionKey == nil || *run.PartitionKey != "batch-7" ||
			!strings.Contains(api.Log("batch_consumer", "by-hand", "load", 1), "partition=batch-7 env=batch-7 events=\n") {
			t.Errorf("manual run with --partition-key: partition %v; want batch-7 in REST, template and environment", run.PartitionKey)
		}
		if r := weir("dags", "trigger", "batch_consumer", "--partition-key", "bad\x01key"); r.Code == 0 ||
			!strings.Contains(r.Stderr, "control character") {
			t.Errorf("dags trigger with a control character in the key: %s; want a refusal", r)
		}
	})
}
