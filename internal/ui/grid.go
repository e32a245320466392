package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// grid is a DAG's grid view: its newest runs as columns (oldest left) and
// its tasks as rows, each cell the state of the task in the run.
type grid struct {
	DagID string
	Runs  []gridRun
	Rows  []gridRow
}

// gridRun is one column.
type gridRun struct {
	core.DagRun
	Duration string // "" when the run has not started
}

// gridRow is one task across the runs.
type gridRow struct {
	TaskID string
	Cells  []gridCell // one per run, in Runs' order
}

// gridCell is one task in one run: the state of its current try or, for
// a mapped task, the state that matters most among its map indices.
type gridCell struct {
	RunID    string
	State    string // a core.TIState; "none" when the run has no instance of the task
	Mapped   bool
	Count    int    // instances (map indices) in the cell
	Detail   string // "3 success, 1 failed" for a mapped task; "" otherwise
	Duration string // from the first start to the last end (or now); "" when none started
	Missing  bool   // the run has no instance of this task (an older or newer DAG version)
}

// summaryOrder ranks the states of a mapped task's instances: the cell
// shows the first one present, so a failure or a running instance is
// never hidden behind successes.
var summaryOrder = []core.TIState{core.TIFailed, core.TIUpstreamFailed, core.TIUpForRetry, core.TIRestarting,
	core.TIRunning, core.TIDeferred, core.TIQueued, core.TIScheduled, core.TINone, core.TISuccess, core.TISkipped,
	core.TIRemoved}

// buildGrid lays out the grid from the DAG's tasks (latest version, in
// their order), its runs (oldest first) and the runs' state counts
// (store.TaskInstanceStateCounts). Tasks that only older runs have come
// after the current ones, by id.
func buildGrid(dagID string, tasks []core.Task, runs []core.DagRun, counts []store.TaskInstanceStateCount, now time.Time) grid {
	g := grid{DagID: dagID}
	col := map[int64]int{}
	for i, r := range runs {
		col[r.ID] = i
		g.Runs = append(g.Runs, gridRun{DagRun: r, Duration: span(r.StartDate, r.EndDate, now)})
	}
	type key struct {
		task string
		col  int
	}
	byCell := map[key][]store.TaskInstanceStateCount{}
	var extra []string
	known := map[string]bool{}
	for _, t := range tasks {
		known[t.TaskID] = true
	}
	for _, c := range counts {
		i, ok := col[c.DagRunID]
		if !ok {
			continue
		}
		if !known[c.TaskID] {
			known[c.TaskID] = true
			extra = append(extra, c.TaskID)
		}
		k := key{c.TaskID, i}
		byCell[k] = append(byCell[k], c)
	}
	slices.Sort(extra)
	ids := make([]string, 0, len(tasks)+len(extra))
	for _, t := range tasks {
		ids = append(ids, t.TaskID)
	}
	for _, id := range append(ids, extra...) {
		row := gridRow{TaskID: id}
		for i, r := range runs {
			row.Cells = append(row.Cells, cellOf(r.RunID, byCell[key{id, i}], now))
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

// cellOf summarizes one cell's state groups.
func cellOf(runID string, groups []store.TaskInstanceStateCount, now time.Time) gridCell {
	c := gridCell{RunID: runID, State: "none"}
	if len(groups) == 0 {
		c.Missing = true
		return c
	}
	var (
		first, last *time.Time
		open        bool // a group started and has not ended
		parts       []string
	)
	rank := len(summaryOrder)
	for _, g := range groups {
		c.Count += g.Count
		c.Mapped = c.Mapped || g.Mapped
		if r := slices.Index(summaryOrder, g.State); r >= 0 && r < rank {
			rank, c.State = r, stateOf(g.State).Name
		}
		parts = append(parts, fmt.Sprintf("%d %s", g.Count, stateOf(g.State).Label))
		if g.FirstStart != nil && (first == nil || g.FirstStart.Before(*first)) {
			first = g.FirstStart
		}
		if g.LastEnd != nil && (last == nil || g.LastEnd.After(*last)) {
			last = g.LastEnd
		}
		open = open || (g.FirstStart != nil && !g.State.Terminal())
	}
	if rank == len(summaryOrder) { // only states this UI does not know
		c.State = stateOf(groups[0].State).Name
	}
	if c.Mapped {
		c.Detail = strings.Join(parts, ", ")
	}
	if open {
		last = nil
	}
	c.Duration = span(first, last, now)
	return c
}

// span is the time from start to end, or to now while end is nil; "" when
// start is nil.
func span(start, end *time.Time, now time.Time) string {
	if start == nil {
		return ""
	}
	e := now
	if end != nil {
		e = *end
	}
	return fmtDuration(e.Sub(*start))
}

// fmtDuration prints a duration to the precision a person reads: "850 ms",
// "12.3 s", "4 min 3 s", "2 h 5 min".
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0 s"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}
