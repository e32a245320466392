package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// aliasProducerDAG seeds the state of exports_2024, then adds it to alias
// exports from a shell task (after trying an alias it does not declare).
const aliasProducerDAG = `dag_id: alias_producer
schedule: null
assets:
  - {name: exports_2024, uri: "file:///tmp/weir-e2e/exports_2024"}
  - {name: alias_other, uri: "file:///tmp/weir-e2e/alias_other"}
tasks:
  seed:
    operator: bash
    outlets: [exports_2024]
    bash_command: weir asset-state set rows 3
  export:
    operator: bash
    depends_on: seed
    outlets: [{alias: exports}]
    bash_command: |
      weir assets add-to-alias other --name exports_2024; echo "undeclared alias: exit $?"
      weir assets add-to-alias exports --name exports_2024 --extra '{"rows": 3}'
`

// aliasConsumerDAG is scheduled on alias exports and reads it as an inlet.
const aliasConsumerDAG = `dag_id: alias_consumer
schedule: [{alias: exports}]
tasks:
  read:
    operator: bash
    inlets: [{alias: exports}]
    bash_command: |
      echo "rows: $(weir asset-state get rows)"
      weir asset-state --name alias_other get rows; echo "unresolved: exit $?"
`

// TestAssetAliasAS2 runs the built binary: a producer task adds an asset to
// an alias with `weir assets add-to-alias`; its success records the event
// and resolves the alias, which triggers the DAG scheduled on the alias;
// its task, with the alias as an inlet, reads the resolved asset's state by
// the shorthand and is refused any other asset (docs/requirements.md#as-2, #as-4).
func TestAssetAliasAS2(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "alias_producer.yaml"), aliasProducerDAG)
	writeFile(t, filepath.Join(dags, "alias_consumer.yaml"), aliasConsumerDAG)
	s := startStandalone(t, home, dags)
	api := s.api.with(t)
	api.WaitDAG("alias_producer")
	api.WaitDAG("alias_consumer")

	api.Trigger("alias_producer", "p1", nil)
	api.WaitRunSuccess("alias_producer", "p1")
	if log := api.Log("alias_producer", "p1", "export", 1); !strings.Contains(log, `may not add assets to alias "other"`) ||
		!strings.Contains(log, "undeclared alias: exit 3") {
		t.Errorf("export log lacks the refusal of alias other:\n%s", log)
	}
	run, evs := api.waitAssetRun("alias_consumer", 1)
	if len(evs) != 1 || evs[0].Name != "exports_2024" || evs[0].SourceKind != core.AssetSourceTask ||
		evs[0].SourceTaskID != "export" || string(evs[0].Extra) != `{"rows":3}` {
		t.Errorf("events that triggered %s: %+v, want export's event of exports_2024 (seed's came before the alias resolved)", run.RunID, evs)
	}
	log := api.Log("alias_consumer", run.RunID, "read", 1)
	for _, want := range []string{"rows: 3", `task read may not access the state of asset "alias_other"`,
		`(declared: "exports_2024")`, "unresolved: exit 3"} {
		if !strings.Contains(log, want) {
			t.Errorf("read log lacks %q:\n%s", want, log)
		}
	}
}
