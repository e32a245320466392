package ui

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestBuildAssetGraph(t *testing.T) {
	t.Parallel()
	assets := []core.AssetModel{{ID: 1, Name: "raw_orders", URI: "s3://raw", Active: true}, {ID: 2, Name: "orders", URI: "s3://orders"}}
	links := []store.AssetLink{
		{AssetID: 1, Kind: store.AssetLinkProducer, DagID: "ingest", TaskID: "fetch"},
		{AssetID: 1, Kind: store.AssetLinkReader, DagID: "clean", TaskID: "read"},
		{AssetID: 1, Kind: store.AssetLinkScheduled, DagID: "clean"},
		{AssetID: 2, Kind: store.AssetLinkProducer, DagID: "clean", TaskID: "write"},
		{AssetID: 2, Kind: store.AssetLinkProducer, DagID: "clean", TaskID: "write_again"},
		{AssetID: 2, Kind: store.AssetLinkReader, DagID: "report", TaskID: "peek"},
		{AssetID: 9, Kind: store.AssetLinkProducer, DagID: "elsewhere", TaskID: "t"}, // not a drawn asset
	}
	g := buildAssetGraph(assets, links)

	// ingest → raw_orders → clean → orders → report, one layer each.
	wantLayer := map[string]int{"dag:ingest": 0, "asset:1": 1, "dag:clean": 2, "asset:2": 3, "dag:report": 4}
	if len(g.Nodes) != len(wantLayer) {
		t.Fatalf("nodes = %+v, want %d", g.Nodes, len(wantLayer))
	}
	for _, n := range g.Nodes {
		if want, ok := wantLayer[n.ID]; !ok || n.Layer != want {
			t.Errorf("node %s in layer %d, want %d (known %v)", n.ID, n.Layer, want, ok)
		}
		if n.ID == "asset:2" && (n.Kind != "asset" || n.Href != "/assets/2" || n.Title != "orders (s3://orders), inactive") {
			t.Errorf("orders node = %+v", n)
		}
	}
	want := map[[2]string]string{
		{"dag:ingest", "asset:1"}: "produces", {"asset:1", "dag:clean"}: "schedules",
		{"dag:clean", "asset:2"}: "produces", {"asset:2", "dag:report"}: "reads",
	}
	if len(g.Edges) != len(want) {
		t.Fatalf("edges = %+v, want %d (one per pair, however many tasks)", g.Edges, len(want))
	}
	for _, e := range g.Edges {
		if k := want[[2]string{e.From, e.To}]; e.Kind != k {
			t.Errorf("edge %s → %s is %q, want %q", e.From, e.To, e.Kind, k)
		}
		if e.From == "dag:clean" && e.Title != "DAG clean produces orders (s3://orders), inactive (task write, write_again)" {
			t.Errorf("clean → orders title = %q", e.Title)
		}
	}
	if got := shorten("a_very_long_asset_name_indeed"); got != "a_very_long_asset_n…" {
		t.Errorf("shorten = %q", got)
	}
}
