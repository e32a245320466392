package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// assetStateCLIDAG checks the in-task asset-state CLI's refusals and exit
// codes: the shorthand with two assets (AS-2), an undeclared asset (AS-4),
// an unknown asset, an absent key and a null value.
const assetStateCLIDAG = `dag_id: asset_state_cli
schedule: null
assets:
  - {name: cli_a, uri: "file:///tmp/cli_a"}
  - {name: cli_b, uri: "file:///tmp/cli_b"}
tasks:
  two:
    operator: bash
    inlets: [cli_a]
    outlets: [cli_b]
    bash_command: |
      weir asset-state get k; echo "shorthand: exit $?"
      weir asset-state --uri file:///tmp/cli_b set k '{"by": "uri"}'; echo "by uri: exit $?"
      echo "by name: $(weir asset-state --name cli_b get k)"
  one:
    operator: bash
    outlets: [cli_a]
    bash_command: |
      weir asset-state --name cli_b set k 1; echo "undeclared: exit $?"
      weir asset-state --name nope get k; echo "unknown asset: exit $?"
      weir asset-state get absent; echo "absent key: exit $?"
      weir asset-state set k null; echo "null: exit $?"
`

// assetStateEntries reads an asset's state over the REST API.
func (c *client) assetStateEntries(name string) map[string]json.RawMessage {
	c.T.Helper()
	var list struct {
		Entries []struct {
			Key   string           `json:"key"`
			Value json.RawMessage  `json:"value"`
			By    core.StateWriter `json:"last_updated_by"`
		} `json:"entries"`
	}
	c.Get(fmt.Sprintf("/api/v2/assets/%d/state-store", c.asset(name).ID), &list)
	out := map[string]json.RawMessage{}
	for _, e := range list.Entries {
		if e.By.Kind != "task" || e.By.TaskID != "load" {
			c.T.Errorf("asset state %s/%s was written by %s %s, want task load", name, e.Key, e.By.Kind, e.By.TaskID)
		}
		out[e.Key] = e.Value
	}
	return out
}

// TestAssetStateWatermark runs examples/dags/watermark_load.yaml twice with
// rows added to the source between the runs: the second run processes only
// the rows newer than the watermark the first run left in the asset's state
// (docs/requirements.md#as-1, #as-3: state that outlives runs; AS-2: the shorthand of a task
// with one asset; AS-6: the writer is recorded). Then the in-task CLI's
// refusals (AS-2, AS-4) and the admin CLI's view of the asset's state.
func TestAssetStateWatermark(t *testing.T) {
	t.Parallel()
	home, dags, data := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "watermark_load.yaml"), readFile(t, filepath.Join(examplesDir(), "watermark_load.yaml")))
	writeFile(t, filepath.Join(dags, "asset_state_cli.yaml"), assetStateCLIDAG)
	s := startStandalone(t, home, dags)
	api := s.api
	source, target := filepath.Join(data, "events.csv"), filepath.Join(data, "warehouse.csv")
	conf := func(n int) map[string]any { return map[string]any{"source": source, "target": target, "new_rows": n} }

	api.WaitDAG("watermark_load")
	api.Trigger("watermark_load", "w1", conf(2))
	api.WaitRunSuccess("watermark_load", "w1")
	if log := api.Log("watermark_load", "w1", "load", 1); !strings.Contains(log, "watermark 0: 2 new rows") ||
		!strings.Contains(log, "processed row 1 (amount 10)") || !strings.Contains(log, "processed row 2 (amount 20)") {
		t.Errorf("run 1 should process rows 1 and 2; log:\n%s", log)
	}
	if got := api.assetStateEntries("warehouse_events"); string(got["watermark"]) != "2" {
		t.Errorf("after run 1 the asset state is %v, want watermark 2", got)
	}

	// More rows arrive between the runs; run 2 appends one more itself.
	f, err := os.OpenFile(source, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("3,30\n4,40\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	api.Trigger("watermark_load", "w2", conf(1))
	api.WaitRunSuccess("watermark_load", "w2")
	log := api.Log("watermark_load", "w2", "load", 1)
	if !strings.Contains(log, "watermark 2: 3 new rows") || strings.Contains(log, "processed row 2 ") ||
		!strings.Contains(log, "processed row 3 (amount 30)") || !strings.Contains(log, "processed row 5 (amount 50)") {
		t.Errorf("run 2 should process only rows 3, 4 and 5; log:\n%s", log)
	}
	got := api.assetStateEntries("warehouse_events")
	if string(got["watermark"]) != "5" || string(got["last_load"]) != `{"run_id":"w2","rows":3}` {
		t.Errorf("after run 2 the asset state is %v, want watermark 5 and last_load of w2", got)
	}
	if loaded := readFile(t, target); loaded != "1,10\n2,20\n3,30\n4,40\n5,50\n" {
		t.Errorf("the target holds %q, want each row once", loaded)
	}

	api.WaitDAG("asset_state_cli")
	api.Trigger("asset_state_cli", "c1", nil)
	api.WaitRunSuccess("asset_state_cli", "c1")
	for task, wants := range map[string][]string{
		"two": {"task has 2 concrete inlets and outlets; pass --name or --uri", "shorthand: exit 2", "by uri: exit 0",
			`by name: {"by":"uri"}`},
		"one": {`task one may not access the state of asset "cli_b"`, `(declared: "cli_a")`, "undeclared: exit 3",
			"Error: get k: no asset \"nope\"\nunknown asset: exit 3", `no asset state key "absent"`, "absent key: exit 1",
			"null cannot be stored", "null: exit 2"},
	} {
		log := api.Log("asset_state_cli", "c1", task, 1)
		for _, want := range wants {
			if !strings.Contains(log, want) {
				t.Errorf("log of %s lacks %q:\n%s", task, want, log)
			}
		}
	}

	// The admin CLI on the same database.
	out := mustWeir(t, nil, "state-store", "list", "--asset", "warehouse_events", "--home", home)
	if !strings.Contains(out, "watermark") || !strings.Contains(out, "task watermark_load/w2/load try 1") {
		t.Errorf("state-store list --asset:\n%s", out)
	}
	if r := runWeir(t, nil, "state-store", "get", "watermark", "--home", home); r.Code == 0 ||
		!strings.Contains(r.Stderr, "dag") || !strings.Contains(r.Stderr, "asset") {
		t.Errorf("get without --dag or --asset should fail naming both: %s", r)
	}
	mustWeir(t, nil, "state-store", "delete", "last_load", "--asset", "warehouse_events", "--home", home)
	if got := api.assetStateEntries("warehouse_events"); len(got) != 1 || string(got["watermark"]) != "5" {
		t.Errorf("after the admin delete: %v", got)
	}
}
