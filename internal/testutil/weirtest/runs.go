package weirtest

import (
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// MostAtOnce is the largest number of runs running at one instant, from
// their start and end dates: a run not started does not count, one not
// ended counts from its start on. An end and a start at the same instant
// do not overlap.
func MostAtOnce(runs []core.DagRun) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, r := range runs {
		if r.StartDate == nil {
			continue
		}
		edges = append(edges, edge{*r.StartDate, 1})
		if r.EndDate != nil {
			edges = append(edges, edge{*r.EndDate, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a start at one instant
	})
	cur, most := 0, 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}
