package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// emissionExamples runs the emission examples of examples/dags in
// TestStandaloneExamples's standalone (home is its Weir home), each from a
// trigger over the REST API, and checks what a user sees
// (docs/emission.md): the batch pipeline (emit_batches.yaml,
// emit_batches_consumer.yaml) and the operational DAG a failure callback
// starts (ops_failing_load.yaml, ops_responder.yaml).
func emissionExamples(t *testing.T, s *standalone, home string) {
	t.Run("emit_batches starts one emit_batches_consumer run per batch and one for its outlet's event", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("emit_batches")
		api.WaitDAG("emit_batches_consumer")
		api.Trigger("emit_batches", "e2e-batches", nil)
		api.WaitRunSuccess("emit_batches", "e2e-batches")
		if tries := api.Tries("emit_batches", "e2e-batches", "ingest"); len(tries) != 1 {
			t.Errorf("ingest took %d tries, want 1", len(tries))
		}
		if log := api.Log("emit_batches", "e2e-batches", "ingest", 1); strings.Count(log, `"duplicate":false`) != 3 ||
			!strings.Contains(log, `"partition_key":"batch-3"`) {
			t.Errorf("ingest's log lacks the receipts of batch-1..3:\n%s", log)
		}

		runs := api.partitionRuns("emit_batches_consumer", 4)
		if got := slices.Sorted(maps.Keys(runs)); strings.Join(got, " ") != "- batch-1 batch-2 batch-3" {
			t.Fatalf("emit_batches_consumer ran for partitions %v; want batch-1..3 and the outlet's keyless event", got)
		}
		for key, run := range runs {
			log := api.Log("emit_batches_consumer", run.RunID, "transform", 1)
			want := "transforming " + key + " from events "
			if key == "-" {
				want = "no batch (the producer's success event)"
			}
			if !strings.Contains(log, want) {
				t.Errorf("transform's log in the run of partition %s lacks %q:\n%s", key, want, log)
			}
		}

		var got []string
		for _, ev := range api.assetEvents("batches") {
			got = append(got, fmt.Sprintf("%s by %s/%s try %d", partitionOf(ev.PartitionKey), ev.SourceRunID, ev.SourceTaskID, ev.SourceTryNumber))
		}
		want := "batch-1 by e2e-batches/ingest try 1, batch-2 by e2e-batches/ingest try 1, batch-3 by e2e-batches/ingest try 1, " +
			"- by e2e-batches/ingest try 1" // the emissions, then the success's outlet event
		if strings.Join(got, ", ") != want {
			t.Errorf("events of batches: %s; want %s", strings.Join(got, ", "), want)
		}
	})

	t.Run("ops_failing_load's failure callback starts ops_responder with the failed run", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("ops_failing_load")
		api.WaitDAG("ops_responder")
		api.Trigger("ops_failing_load", "e2e-fails", map[string]any{"fail": true})
		if run := api.WaitRunDone("ops_failing_load", "e2e-fails"); run.State != core.RunFailed {
			t.Fatalf("ops_failing_load with fail=true ended %s, want failed", run.State)
		}
		// load's on_retry and on_failure commands, and the run's notifier.
		var notifier core.Callback
		for _, cb := range api.callbacksOf("ops_failing_load", "e2e-fails", 3) {
			if cb.State != core.CallbackSuccess {
				t.Errorf("callback %d (%s %s) is %s: %s", cb.ID, cb.Level, cb.Event, cb.State, cb.Error)
			}
			if cb.Level == core.CallbackDag {
				notifier = cb
			}
		}
		if notifier.Event != core.OnFailure || notifier.Spec.Notifier != core.NotifierAssetEvent {
			t.Fatalf("the run's callback is %+v, want its on_failure asset_event notifier", notifier)
		}

		run, evs := api.waitAssetRun("ops_responder", 1)
		if len(evs) != 1 {
			t.Fatalf("ops_responder's run %s came from %d events, want the notifier's one", run.RunID, len(evs))
		}
		ev, key := evs[0], "ops_failing_load/e2e-fails"
		if ev.Name != "ops_alerts" || ev.SourceKind != core.AssetSourceCallback || ev.SourceCallbackID != notifier.ID ||
			ev.SourceDagID != "ops_failing_load" || ev.SourceRunID != "e2e-fails" || ev.SourceTaskID != "" ||
			ev.PartitionKey == nil || *ev.PartitionKey != key || !strings.Contains(string(ev.Extra), `"failed_run":"e2e-fails"`) {
			t.Errorf("ops_responder's event %+v; want ops_alerts from callback %d of ops_failing_load/e2e-fails, no task, partition %s",
				ev, notifier.ID, key)
		}
		if run.PartitionKey == nil || *run.PartitionKey != key {
			t.Errorf("ops_responder's run has partition %v, want %s", run.PartitionKey, key)
		}
		if log := api.Log("ops_responder", run.RunID, "triage", 1); !strings.Contains(log, "failed: "+key+"\n") ||
			!strings.Contains(log, `"source_run_id":"e2e-fails"`) {
			t.Errorf("triage's log lacks the failed run from its events:\n%s", log)
		}

		// `weir assets events` names the callback and its run, not the bare kind.
		out := mustWeir(t, nil, "assets", "events", "--asset", "ops_alerts", "--home", home)
		if want := fmt.Sprintf("callback %d of run ops_failing_load/e2e-fails", notifier.ID); !strings.Contains(out, want) {
			t.Errorf("weir assets events --asset ops_alerts lacks %q:\n%s", want, out)
		}
	})
}
