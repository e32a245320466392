package ui

import (
	"cmp"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// assetGraphMax is how many assets the asset graph draws at most; a
// filter narrows a larger graph.
const assetGraphMax = 200

// assetGraph is the asset graph: DAGs and assets as nodes, laid out by the
// DAG graph's layered layout (layoutGraph), producers left of their assets
// and the DAGs an asset schedules or is read by right of it.
type assetGraph struct {
	Layout graphLayout
	Nodes  []assetGraphNode
	Edges  []assetGraphEdge
}

// assetGraphNode is a laid-out DAG or asset.
type assetGraphNode struct {
	graphNode
	Kind  string // "dag" or "asset"
	Label string // shortened to fit the box
	Title string // the full name and what it does
	Href  string
}

// assetGraphEdge is a laid-out use: "produces", "schedules" or "reads".
type assetGraphEdge struct {
	graphEdge
	Kind  string
	Title string
}

// linksOf lists how active DAGs use the listed assets (each holds its
// users), in store.AssetLinks's order: by asset id, then producers,
// readers, scheduled DAGs.
func linksOf(assets []core.AssetModel) []store.AssetLink {
	byID := slices.SortedFunc(slices.Values(assets), func(a, b core.AssetModel) int { return cmp.Compare(a.ID, b.ID) })
	var links []store.AssetLink
	for _, a := range byID {
		for _, t := range a.Producing {
			links = append(links, store.AssetLink{AssetID: a.ID, Kind: store.AssetLinkProducer, DagID: t.DagID, TaskID: t.TaskID})
		}
		for _, t := range a.Consuming {
			links = append(links, store.AssetLink{AssetID: a.ID, Kind: store.AssetLinkReader, DagID: t.DagID, TaskID: t.TaskID})
		}
		for _, d := range a.ScheduledDags {
			links = append(links, store.AssetLink{AssetID: a.ID, Kind: store.AssetLinkScheduled, DagID: d.DagID})
		}
	}
	return links
}

// buildAssetGraph draws assets and how active DAGs use them (links, as
// store.AssetLinks gives them): a DAG with a task producing an asset points to it;
// an asset points to each DAG it schedules and, dashed, each DAG with a
// task that only reads it. Pure, so it is table-tested.
func buildAssetGraph(assets []core.AssetModel, links []store.AssetLink) assetGraph {
	ids := []string{}
	up := map[string][]string{}
	info := map[string]assetGraphNode{}
	tasks := map[[2]string][]string{} // (from, to) → tasks behind the edge
	kinds := map[[2]string]string{}
	for _, a := range assets {
		id := "asset:" + strconv.FormatInt(a.ID, 10)
		ids = append(ids, id)
		title := a.Name + " (" + a.URI + ")"
		if !a.Active {
			title += ", inactive"
		}
		info[id] = assetGraphNode{Kind: "asset", Label: shorten(a.Name), Title: title, Href: "/assets/" + strconv.FormatInt(a.ID, 10)}
	}
	var dags []string
	for _, l := range links {
		asset, dag := "asset:"+strconv.FormatInt(l.AssetID, 10), "dag:"+l.DagID
		if _, ok := info[asset]; !ok {
			continue
		}
		if _, ok := info[dag]; !ok {
			dags = append(dags, dag)
			info[dag] = assetGraphNode{Kind: "dag", Label: shorten(l.DagID), Title: "DAG " + l.DagID, Href: "/dags/" + pathEscape(l.DagID)}
		}
		e, kind := [2]string{asset, dag}, "reads"
		switch l.Kind {
		case store.AssetLinkProducer:
			e, kind = [2]string{dag, asset}, "produces"
		case store.AssetLinkScheduled:
			kind = "schedules"
		}
		if prev, ok := kinds[e]; !ok {
			up[e[1]] = append(up[e[1]], e[0])
			kinds[e] = kind
		} else if prev == "reads" && kind == "schedules" {
			kinds[e] = kind // scheduling matters more than reading
		}
		if l.TaskID != "" {
			tasks[e] = append(tasks[e], l.TaskID)
		}
	}
	sort.Strings(dags)
	ids = append(ids, dags...)
	g := assetGraph{Layout: layoutGraph(ids, up)}
	for _, n := range g.Layout.Nodes {
		v := info[n.ID]
		v.graphNode = n
		g.Nodes = append(g.Nodes, v)
	}
	for _, e := range g.Layout.Edges {
		k := [2]string{e.From, e.To}
		title := info[e.From].Title + " " + kinds[k] + " " + info[e.To].Title
		if ts := tasks[k]; len(ts) > 0 {
			title += " (task " + strings.Join(ts, ", ") + ")"
		}
		g.Edges = append(g.Edges, assetGraphEdge{graphEdge: e, Kind: kinds[k], Title: title})
	}
	return g
}

// shorten fits a name into a graph node's box.
func shorten(s string) string {
	const limit = 20
	if r := []rune(s); len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return s
}

// assetGraphData is the asset graph page's model.
type assetGraphData struct {
	Query, Status string
	Graph         assetGraph
	Shown, Total  int
}

// assetGraphPage draws the asset graph of the assets the filters select
// (?q=, ?status= as the assets list; the first assetGraphMax of them),
// read in two queries: the assets, then their links.
func (u *UI) assetGraphPage(w http.ResponseWriter, r *http.Request, req *request) {
	var d assetGraphData
	p, err := assetFilter(r.URL.Query(), &d.Query, &d.Status)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	p.Limit = assetGraphMax
	assets, total, err := store.List(r.Context(), p, u.st.AssetList, u.st.AssetCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d.Graph, d.Shown, d.Total = buildAssetGraph(assets, linksOf(assets)), len(assets), total
	u.render(w, r, http.StatusOK, "assetgraph", req, "Asset graph", d)
}
