package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// emitProducerDAG's ingest task emits one event per committed batch with
// `weir assets emit`: batch-1..3 on its first try, which then fails, and
// batch-1..5 on its retry with the same idempotency keys. The first try
// also tries the bad inputs of docs/requirements.md#e.
const emitProducerDAG = `dag_id: emit_producer
schedule: null
assets:
  - {name: batches, uri: "file:///tmp/weir-e2e/batches"}
  - {name: audit_log, uri: "file:///tmp/weir-e2e/audit_log"}
  - {name: not_mine, uri: "file:///tmp/weir-e2e/not_mine"}
tasks:
  define:
    operator: bash
    inlets: [not_mine]
    bash_command: "true"
  ingest:
    operator: bash
    retries: 1
    retry_delay: 1s
    outlets: [batches, audit_log]
    bash_command: |
      last=3; [ "$WEIR_TRY_NUMBER" = 2 ] && last=5
      for n in $(seq 1 $last); do
        weir assets emit --name batches --partition-key "batch-$n" --idempotency-key "ingest/batch-$n" \
          --partition-date "2026-03-0${n}T00:00:00+01:00" --extra "{\"n\": $n}" || exit 9
      done
      if [ "$WEIR_TRY_NUMBER" = 1 ]; then
        weir assets emit --name not_mine; echo "undeclared: exit $?"
        weir assets emit --name batches --partition-date 2026-03-01T00:00:00Z; echo "date without key: exit $?"
        weir assets emit --name batches --extra "{\"blob\": \"$(head -c 20000 /dev/zero | tr '\0' x)\"}"; echo "oversized: exit $?"
        weir assets emit --name batches --partition-key batch-2 --idempotency-key ingest/batch-1; echo "key of another partition: exit $?"
        weir assets emit --name batches --idempotency-key "$UNSET_KEY"; echo "empty key: exit $?"
        weir assets emit --name batches --extra '{"v": NaN}'; echo "NaN: exit $?"
        exit 1
      fi
`

// emitConsumerDAG runs on the batches' events (coalesced: the default).
const emitConsumerDAG = `dag_id: emit_consumer
schedule: [batches]
assets:
  - {name: batches, uri: "file:///tmp/weir-e2e/batches"}
tasks:
  use:
    operator: bash
    bash_command: |
      echo "partitions: {{ range .triggering_asset_events }}{{ .partition_key }},{{ end }}"
      echo "events: $WEIR_TRIGGERING_ASSET_EVENTS"
`

// emitEitherDAG runs once on its time schedule (@once) and whenever
// audit_log or batches has events: an asset-or-time schedule with an
// any-of condition (docs/assets.md#conditional-schedules).
const emitEitherDAG = `dag_id: emit_either
start_date: 2026-01-01
schedule:
  cron: "@once"
  assets: {any: [audit_log, batches]}
assets:
  - {name: batches, uri: "file:///tmp/weir-e2e/batches"}
  - {name: audit_log, uri: "file:///tmp/weir-e2e/audit_log"}
tasks:
  use:
    operator: bash
    bash_command: "true"
`

// TestEmitFromShellTask (docs/requirements.md#e-1 to #e-4, docs/emission.md) runs the built
// binary on both engines: a shell task's emissions commit as it runs and
// stay when its try fails; its retry repeats the keys and only batch-4 and
// batch-5 create events; every bad input is refused with the documented
// exit code and creates nothing; a consumer runs on the events; outside a
// task the command refuses to emit.
func TestEmitFromShellTask(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		home, dags := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(dags, "emit_producer.yaml"), emitProducerDAG)
		writeFile(t, filepath.Join(dags, "emit_consumer.yaml"), emitConsumerDAG)
		writeFile(t, filepath.Join(dags, "emit_either.yaml"), emitEitherDAG)
		s := startStandalone(t, home, dags, env...)
		api := s.api.with(t)
		api.WaitDAG("emit_producer")
		api.WaitDAG("emit_consumer")
		api.WaitDAG("emit_either")

		api.Trigger("emit_producer", "p1", nil)
		api.WaitRunSuccess("emit_producer", "p1")
		log1 := api.Log("emit_producer", "p1", "ingest", 1)
		for _, want := range []string{
			`"partition_key":"batch-3"`, `"duplicate":false`,
			`may not emit events for asset not_mine: it is not one of the task's outlets (its outlets: assets "batches", "audit_log")`,
			"undeclared: exit 3", `needs a "partition_key"`, "date without key: exit 2",
			"more than the 16384 allowed", "oversized: exit 2",
			`a repeated emission must name the same partition`, "key of another partition: exit 3",
			`"idempotency_key" must not be empty`, "empty key: exit 2",
			`--extra {"v": NaN} is not JSON (invalid character 'N'`, "NaN: exit 2",
		} {
			if !strings.Contains(log1, want) {
				t.Errorf("first try's log lacks %q:\n%s", want, log1)
			}
		}
		if log2 := api.Log("emit_producer", "p1", "ingest", 2); strings.Count(log2, `"duplicate":true`) != 3 ||
			strings.Count(log2, `"duplicate":false`) != 2 {
			t.Errorf("retry's log: want batch-1..3 duplicate and batch-4..5 new:\n%s", log2)
		}
		var got []string
		for _, ev := range api.assetEvents("batches") {
			got = append(got, fmt.Sprintf("%s@try%d", partitionOf(ev.PartitionKey), ev.SourceTryNumber))
		}
		want := "batch-1@try1 batch-2@try1 batch-3@try1 batch-4@try2 batch-5@try2 -@try2" // then the success's outlet event
		if strings.Join(got, " ") != want {
			t.Errorf("events of batches: %v, want %s", got, want)
		}
		// The consumer's run context lists the events that created it.
		run, evs := api.waitAssetRun("emit_consumer", 1)
		if len(evs) == 0 || evs[0].Name != "batches" {
			t.Fatalf("the first consumer run consumed %+v, want events of batches", evs)
		}
		parts := ""
		for _, ev := range evs {
			if ev.PartitionKey != nil {
				parts += *ev.PartitionKey
			}
			parts += ","
		}
		log := api.Log("emit_consumer", run.RunID, "use", 1)
		if !strings.Contains(log, "partitions: "+parts+"\n") || !strings.Contains(log, fmt.Sprintf(`"id":%d,`, evs[0].ID)) {
			t.Errorf("consumer log lacks its events (partitions %s, event %d in $WEIR_TRIGGERING_ASSET_EVENTS):\n%s", parts, evs[0].ID, log)
		}

		// The asset-or-time consumer ran on its time schedule and on events
		// of batches alone (any-of audit_log, batches).
		api.waitAssetRun("emit_either", 1)
		weirtest.WaitFor(t, "the scheduled run of emit_either", func() (bool, string) {
			var page struct {
				DagRuns []core.DagRun `json:"dag_runs"`
			}
			api.Get("/api/v2/dags/emit_either/dagRuns", &page)
			for _, r := range page.DagRuns {
				if r.RunType == core.RunScheduled {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d runs, none scheduled", len(page.DagRuns))
		})

		// docs/requirements.md#e-7 from the admin CLI, against the same database.
		weir := func(args ...string) result { return runWeir(t, env, append(args, "--home", home)...) }
		create := []string{"assets", "events", "create", "--name", "batches", "--partition-key", "batch-9",
			"--idempotency-key", "upstream/batch-9", "--extra", `{"rows": 1}`}
		for i, want := range []string{`"duplicate": false`, `"duplicate": true`} {
			if r := weir(create...); r.Code != 0 || !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, `"source_user": "cli:`) {
				t.Errorf("events create, call %d: %s; want %s and the CLI user as the source", i+1, r, want)
			}
		}
		if r := weir("assets", "events", "create", "--name", "batches", "--partition-key", "batch-8", "--idempotency-key", "upstream/batch-9"); r.Code == 0 ||
			!strings.Contains(r.Stderr, `a repeated emission must name the same partition`) {
			t.Errorf("events create reusing a key for another partition: %s; want a refusal", r)
		}
		if r := weir("assets", "events", "create", "--name", "batches", "--idempotency-key", ""); r.Code == 0 ||
			!strings.Contains(r.Stderr, `"idempotency_key" must not be empty`) {
			t.Errorf("events create with an empty key: %s; want a refusal naming the key", r)
		}
		// A key names one event of its asset: another asset's use of it is its own event.
		if r := weir("assets", "events", "create", "--name", "audit_log", "--idempotency-key", "upstream/batch-9"); r.Code != 0 ||
			!strings.Contains(r.Stdout, `"duplicate": false`) {
			t.Errorf("events create with batches' key on audit_log: %s; want a new event", r)
		}
		if r := weir("assets", "events", "--asset", "batches", "--partition", "batch-9"); r.Code != 0 ||
			strings.Count(r.Stdout, "batch-9") != 1 || !strings.Contains(r.Stdout, "api cli:") {
			t.Errorf("assets events --partition batch-9: %s; want one row posted by the CLI user", r)
		}

		r := weirtest.Run(t, weirBin, nil, "assets", "emit", "--name", "batches")
		if r.Code != 3 || !strings.Contains(r.Stderr, "run this inside a Weir task") {
			t.Errorf("emit outside a task: %s; want exit 3 saying it runs inside a task", r)
		}
	})
}
