package ui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A layered (Sugiyama) layout of a DAG, left to right: each task gets a
// layer by its longest path from a root, an edge that spans several layers
// passes through a dummy point in each layer between, the order within
// each layer is improved by barycenter sweeps to cut crossings, and layers
// are centred on each other. Pure, so it is table-tested.

// Layout sizes, in SVG user units.
const (
	nodeW, nodeH = 168, 34
	gapX, gapY   = 56, 14
	pad          = 8
)

// graphNode is one laid-out task.
type graphNode struct {
	ID    string
	Layer int
	X, Y  int // top-left corner
}

// graphEdge is one dependency, drawn through its points.
type graphEdge struct {
	From, To string
	Path     string // an SVG path
}

// graphLayout is the whole drawing.
type graphLayout struct {
	Nodes         []graphNode
	Edges         []graphEdge
	Width, Height int
	Crossings     int // edge crossings left after ordering
}

// slot is a node or a dummy point in a layer.
type slot struct {
	id    string // task id, or "" for a dummy
	edge  int    // for a dummy: the edge it carries
	layer int
	pos   float64
}

// layoutGraph lays out tasks (id → upstream ids, in the given order of ids).
// Unknown upstream ids are ignored; a cycle cannot occur in a valid DAG,
// but one would only stretch the layers, never loop.
func layoutGraph(ids []string, upstream map[string][]string) graphLayout {
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	layer := map[string]int{}
	var depth func(id string, seen int) int
	depth = func(id string, seen int) int {
		if l, ok := layer[id]; ok {
			return l
		}
		l := 0
		if seen <= len(ids) { // a guard against cycles
			for _, up := range upstream[id] {
				if known[up] {
					l = max(l, depth(up, seen+1)+1)
				}
			}
		}
		layer[id] = l
		return l
	}
	layers := [][]*slot{}
	add := func(s *slot) {
		for len(layers) <= s.layer {
			layers = append(layers, nil)
		}
		s.pos = float64(len(layers[s.layer]))
		layers[s.layer] = append(layers[s.layer], s)
	}
	nodes := map[string]*slot{}
	for _, id := range ids {
		nodes[id] = &slot{id: id, layer: depth(id, 0)}
		add(nodes[id])
	}
	type edge struct {
		from, to string
		chain    []*slot // from, dummies..., to
	}
	var edges []edge
	for _, id := range ids {
		for _, up := range upstream[id] {
			if !known[up] {
				continue
			}
			e := edge{from: up, to: id, chain: []*slot{nodes[up]}}
			for l := nodes[up].layer + 1; l < nodes[id].layer; l++ {
				d := &slot{edge: len(edges), layer: l}
				add(d)
				e.chain = append(e.chain, d)
			}
			e.chain = append(e.chain, nodes[id])
			edges = append(edges, e)
		}
	}
	// Neighbours of each slot in the layer before and after.
	before, after := map[*slot][]*slot{}, map[*slot][]*slot{}
	for _, e := range edges {
		for i := 1; i < len(e.chain); i++ {
			before[e.chain[i]] = append(before[e.chain[i]], e.chain[i-1])
			after[e.chain[i-1]] = append(after[e.chain[i-1]], e.chain[i])
		}
	}
	sweep := func(l int, nb map[*slot][]*slot) {
		for _, s := range layers[l] {
			if n := nb[s]; len(n) > 0 {
				sum := 0.0
				for _, o := range n {
					sum += o.pos
				}
				s.pos = sum / float64(len(n))
			}
		}
		sort.SliceStable(layers[l], func(i, j int) bool { return layers[l][i].pos < layers[l][j].pos })
		for i, s := range layers[l] {
			s.pos = float64(i)
		}
	}
	crossings := func() int {
		n := 0
		for l := 1; l < len(layers); l++ {
			var segs [][2]float64
			for _, s := range layers[l] {
				for _, o := range before[s] {
					segs = append(segs, [2]float64{o.pos, s.pos})
				}
			}
			for i := range segs {
				for j := i + 1; j < len(segs); j++ {
					if (segs[i][0]-segs[j][0])*(segs[i][1]-segs[j][1]) < 0 {
						n++
					}
				}
			}
		}
		return n
	}
	best, bestOrder := crossings(), snapshot(layers)
	for range 8 {
		for l := 1; l < len(layers); l++ {
			sweep(l, before)
		}
		for l := len(layers) - 2; l >= 0; l-- {
			sweep(l, after)
		}
		if c := crossings(); c < best {
			best, bestOrder = c, snapshot(layers)
		}
	}
	restore(layers, bestOrder)

	// Coordinates: layers side by side, each centred on the tallest.
	tallest := 0
	for _, l := range layers {
		tallest = max(tallest, len(l))
	}
	xy := map[*slot][2]int{}
	for li, l := range layers {
		off := (tallest - len(l)) * (nodeH + gapY) / 2
		for i, s := range l {
			xy[s] = [2]int{pad + li*(nodeW+gapX), pad + off + i*(nodeH+gapY)}
		}
	}
	g := graphLayout{Width: 2*pad + len(layers)*(nodeW+gapX) - gapX, Height: 2*pad + tallest*(nodeH+gapY) - gapY, Crossings: best}
	if len(layers) == 0 {
		g.Width, g.Height = 2*pad, 2*pad
	}
	for _, id := range ids {
		p := xy[nodes[id]]
		g.Nodes = append(g.Nodes, graphNode{ID: id, Layer: nodes[id].layer, X: p[0], Y: p[1]})
	}
	for _, e := range edges {
		g.Edges = append(g.Edges, graphEdge{From: e.from, To: e.to, Path: edgePath(e.chain, xy)})
	}
	return g
}

// edgePath draws an edge from the right of its first slot to the left of
// its last, through its dummies, as smooth curves.
func edgePath(chain []*slot, xy map[*slot][2]int) string {
	var b strings.Builder
	pt := func(s *slot, right bool) (int, int) {
		p := xy[s]
		x, y := p[0], p[1]+nodeH/2
		if s.id == "" { // a dummy: pass straight through its slot
			return x + nodeW/2, y
		}
		if right {
			x += nodeW
		}
		return x, y
	}
	x0, y0 := pt(chain[0], true)
	fmt.Fprintf(&b, "M%d,%d", x0, y0)
	for _, s := range chain[1:] {
		x1, y1 := pt(s, false)
		mid := (x0 + x1) / 2
		fmt.Fprintf(&b, " C%d,%d %d,%d %d,%d", mid, y0, mid, y1, x1, y1)
		x0, y0 = x1, y1
	}
	return b.String()
}

func snapshot(layers [][]*slot) [][]*slot {
	out := make([][]*slot, len(layers))
	for i, l := range layers {
		out[i] = slices.Clone(l)
	}
	return out
}

func restore(layers, from [][]*slot) {
	for i := range layers {
		copy(layers[i], from[i])
		for j, s := range layers[i] {
			s.pos = float64(j)
		}
	}
}
