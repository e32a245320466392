package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiv2 "github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// assetRuns returns the consumer's asset-triggered runs, newest first.
func (c *client) assetRuns(dagID string) []core.DagRun {
	c.T.Helper()
	var page struct {
		DagRuns []core.DagRun `json:"dag_runs"`
	}
	c.Get("/api/v2/dags/"+dagID+"/dagRuns", &page)
	var out []core.DagRun
	for _, r := range page.DagRuns {
		if r.RunType == core.RunAssetTriggered {
			out = append(out, r)
		}
	}
	return out
}

// waitAssetRun waits for the DAG's n-th asset-triggered run to succeed and
// returns it with the events that triggered it.
func (c *client) waitAssetRun(dagID string, n int) (core.DagRun, []core.AssetEvent) {
	c.T.Helper()
	var runs []core.DagRun
	waitFor(c.T, fmt.Sprintf("asset-triggered run %d of %s", n, dagID), func() (bool, string) {
		runs = c.assetRuns(dagID)
		return len(runs) >= n, fmt.Sprintf("%d asset-triggered runs", len(runs))
	})
	run := c.WaitRunSuccess(dagID, runs[len(runs)-n].RunID)
	var evs struct {
		AssetEvents []core.AssetEvent `json:"asset_events"`
	}
	c.Get(runPath(dagID, run.RunID)+"/upstreamAssetEvents", &evs)
	return run, evs.AssetEvents
}

// asset returns the asset named name (active or not).
func (c *client) asset(name string) core.AssetModel {
	c.T.Helper()
	var page struct {
		Assets []core.AssetModel `json:"assets"`
	}
	c.Get("/api/v2/assets?only_active=false&name_pattern="+name, &page)
	for _, a := range page.Assets {
		if a.Name == name {
			return a
		}
	}
	c.T.Fatalf("no asset named %q in %+v", name, page.Assets)
	return core.AssetModel{}
}

// assetEvents returns the events of the asset named name, oldest first
// (the first 100).
func (c *client) assetEvents(name string) []core.AssetEvent {
	c.T.Helper()
	var page struct {
		AssetEvents []core.AssetEvent `json:"asset_events"`
	}
	c.Get(fmt.Sprintf("/api/v2/assets/events?asset_id=%d&limit=100", c.asset(name).ID), &page)
	return page.AssetEvents
}

// partitionOf is a partition key as the tests name it: "-" for none.
func partitionOf(key *string) string {
	if key == nil {
		return "-"
	}
	return *key
}

// TestStandaloneAssets runs the asset examples: a successful producer run
// triggers the consumer, so does an event posted to the API, and removing
// the DAG files deactivates the assets only they defined.
func TestStandaloneAssets(t *testing.T) {
	t.Parallel()
	dags, home := t.TempDir(), t.TempDir()
	for _, f := range []string{"asset_producer.yaml", "asset_consumer.yaml"} {
		writeFile(t, filepath.Join(dags, f), readFile(t, filepath.Join(examplesDir(), f)))
	}
	s := startStandalone(t, home, dags)
	api := s.api.with(t)
	api.WaitDAG("asset_producer")
	api.WaitDAG("asset_consumer")

	api.Trigger("asset_producer", "e2e-produce", nil)
	api.WaitRunSuccess("asset_producer", "e2e-produce")
	run, evs := api.waitAssetRun("asset_consumer", 1)
	if !strings.HasPrefix(run.RunID, "asset_triggered__") {
		t.Errorf("consumer run id %q, want asset_triggered__<timestamp>", run.RunID)
	}
	if len(evs) != 1 || evs[0].Name != "orders" || evs[0].SourceKind != core.AssetSourceTask ||
		evs[0].SourceDagID != "asset_producer" || evs[0].SourceRunID != "e2e-produce" || evs[0].SourceTaskID != "load_orders" {
		t.Errorf("events that triggered %s: %+v, want the producer's load_orders event", run.RunID, evs)
	}
	if log := api.Log("asset_consumer", run.RunID, "summarize", 1); !strings.Contains(log, "saw orders") {
		t.Errorf("summarize log lacks %q:\n%s", "saw orders", log)
	}

	orders := api.asset("orders")
	var posted core.AssetEvent
	api.Call(http.MethodPost, "/api/v2/assets/events", map[string]any{"asset_id": orders.ID, "extra": map[string]any{"from": "e2e"}}, &posted)
	run2, evs := api.waitAssetRun("asset_consumer", 2)
	if len(evs) != 1 || evs[0].ID != posted.ID || evs[0].SourceKind != core.AssetSourceAPI {
		t.Errorf("events that triggered %s: %+v, want the posted event %d", run2.RunID, evs, posted.ID)
	}

	out := mustWeir(t, nil, "assets", "events", "--asset", "orders", "--home", home)
	if !regexp.MustCompile(`(?m)task asset_producer/e2e-produce/load_orders try 1`).MatchString(out) ||
		!strings.Contains(out, `{"from":"e2e"}`) {
		t.Errorf("weir assets events --asset orders lacks the task and the API event:\n%s", out)
	}

	// The consumer still defines orders: removing the producer keeps it active.
	if err := os.Remove(filepath.Join(dags, "asset_producer.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "asset_producer to become inactive", func() (bool, string) {
		var d apiv2.DAGDetails
		api.Get("/api/v2/dags/asset_producer", &d)
		return !d.IsActive, fmt.Sprintf("is_active %v", d.IsActive)
	})
	if a := api.asset("orders"); !a.Active {
		t.Errorf("orders is inactive although asset_consumer.yaml still defines it")
	}
	if err := os.Remove(filepath.Join(dags, "asset_consumer.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "orders to become inactive once no DAG file defines it", func() (bool, string) {
		a := api.asset("orders")
		return !a.Active && a.InactiveSince != nil, fmt.Sprintf("active %v since %v", a.Active, a.InactiveSince)
	})
	if list := mustWeir(t, nil, "assets", "list", "--home", home); strings.Contains(list, "orders") {
		t.Errorf("weir assets list shows the inactive asset orders:\n%s", list)
	}
}
