package ui

import (
	"fmt"
	"testing"
)

func TestLayoutGraph(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ids       []string
		up        map[string][]string
		layers    map[string]int
		sameRow   [][2]string // nodes drawn at the same height
		crossings int
	}{{
		name:    "a chain is one row",
		ids:     []string{"a", "b", "c"},
		up:      map[string][]string{"b": {"a"}, "c": {"b"}},
		layers:  map[string]int{"a": 0, "b": 1, "c": 2},
		sameRow: [][2]string{{"a", "b"}, {"b", "c"}},
	}, {
		name:   "a diamond joins in the last layer",
		ids:    []string{"a", "b", "c", "d"},
		up:     map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"b", "c"}},
		layers: map[string]int{"a": 0, "b": 1, "c": 1, "d": 2},
	}, {
		name:   "a task goes one layer after its deepest upstream; the long edge gets dummies",
		ids:    []string{"a", "b", "c", "d"},
		up:     map[string][]string{"b": {"a"}, "c": {"b"}, "d": {"a", "c"}},
		layers: map[string]int{"a": 0, "b": 1, "c": 2, "d": 3},
	}, {
		name:    "barycenter ordering removes a crossing the given order has",
		ids:     []string{"a", "b", "x", "y"},
		up:      map[string][]string{"y": {"a"}, "x": {"b"}},
		layers:  map[string]int{"a": 0, "b": 0, "x": 1, "y": 1},
		sameRow: [][2]string{{"a", "y"}, {"b", "x"}},
	}, {
		name:   "unknown upstreams are ignored, lone tasks stand in layer 0",
		ids:    []string{"a", "b"},
		up:     map[string][]string{"b": {"gone"}},
		layers: map[string]int{"a": 0, "b": 0},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := layoutGraph(tc.ids, tc.up)
			at := map[string]graphNode{}
			seen := map[[2]int]string{}
			for _, n := range g.Nodes {
				at[n.ID] = n
				if other, ok := seen[[2]int{n.X, n.Y}]; ok {
					t.Errorf("%s and %s overlap at %d,%d", n.ID, other, n.X, n.Y)
				}
				seen[[2]int{n.X, n.Y}] = n.ID
				if n.X < 0 || n.Y < 0 || n.X+nodeW > g.Width || n.Y+nodeH > g.Height {
					t.Errorf("%s at %d,%d lies outside %dx%d", n.ID, n.X, n.Y, g.Width, g.Height)
				}
			}
			for id, l := range tc.layers {
				if at[id].Layer != l {
					t.Errorf("layer of %s = %d, want %d", id, at[id].Layer, l)
				}
				if at[id].X != pad+l*(nodeW+gapX) {
					t.Errorf("x of %s = %d, want its layer's %d", id, at[id].X, pad+l*(nodeW+gapX))
				}
			}
			for _, p := range tc.sameRow {
				if at[p[0]].Y != at[p[1]].Y {
					t.Errorf("%s (y %d) and %s (y %d) should be level", p[0], at[p[0]].Y, p[1], at[p[1]].Y)
				}
			}
			if g.Crossings != tc.crossings {
				t.Errorf("crossings = %d, want %d", g.Crossings, tc.crossings)
			}
			var edges int
			for _, ups := range tc.up {
				for _, u := range ups {
					if _, ok := at[u]; ok {
						edges++
					}
				}
			}
			if len(g.Edges) != edges {
				t.Errorf("%d edges drawn, want %d", len(g.Edges), edges)
			}
		})
	}
}

// A wide fan-out and fan-in lays out without overlaps or crossings.
func TestLayoutGraphFan(t *testing.T) {
	t.Parallel()
	ids := []string{"start"}
	up := map[string][]string{}
	for i := range 20 {
		id := fmt.Sprintf("t%02d", i)
		ids = append(ids, id)
		up[id] = []string{"start"}
		up["end"] = append(up["end"], id)
	}
	ids = append(ids, "end")
	g := layoutGraph(ids, up)
	if g.Crossings != 0 || len(g.Nodes) != 22 || len(g.Edges) != 40 {
		t.Fatalf("fan: %d crossings, %d nodes, %d edges; want 0, 22, 40", g.Crossings, len(g.Nodes), len(g.Edges))
	}
}
