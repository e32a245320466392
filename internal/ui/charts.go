package ui

import (
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Chart sizes, in SVG user units.
const (
	chartLabelW = 200    // the task-name column
	chartW      = 800    // the plot area
	barH, barY  = 18, 24 // a bar's height and each row's pitch
)

// gantt is a run's Gantt chart: a bar per task instance from start to end
// (or now), with the time it waited in the queue before it.
type gantt struct {
	Bars          []ganttBar
	Width, Height int
	Span          string // what the full width stands for
}

// ganttBar is one task instance's row.
type ganttBar struct {
	Label, State, Duration string
	Y                      int
	QX, QW                 int // the queued stretch
	X, W                   int // the running stretch
}

// buildGantt lays out the Gantt chart of task instances; instances that
// never started get an empty row.
func buildGantt(tis []core.TaskInstance, now time.Time) gantt {
	var from, to time.Time
	for _, ti := range tis {
		for _, t := range []*time.Time{ti.QueuedAt, ti.StartDate} {
			if t != nil && (from.IsZero() || t.Before(from)) {
				from = *t
			}
		}
		end := ti.EndDate
		if end == nil && ti.StartDate != nil {
			end = &now
		}
		if end != nil && end.After(to) {
			to = *end
		}
	}
	total := to.Sub(from)
	if total <= 0 {
		total = time.Second
	}
	scale := func(t time.Time) int { return int(int64(chartW) * int64(t.Sub(from)) / int64(total)) }
	g := gantt{Width: chartLabelW + chartW, Height: len(tis)*barY + 4, Span: fmtDuration(total)}
	for i, ti := range tis {
		b := ganttBar{Label: ti.TaskID, State: stateOf(ti.State).Name, Y: 2 + i*barY}
		if ti.MapIndex >= 0 {
			b.Label += " [" + strconv.Itoa(ti.MapIndex) + "]"
		}
		if ti.StartDate != nil {
			end := now
			if ti.EndDate != nil {
				end = *ti.EndDate
			}
			b.X, b.W = chartLabelW+scale(*ti.StartDate), max(2, scale(end)-scale(*ti.StartDate))
			b.Duration = fmtDuration(end.Sub(*ti.StartDate))
			if ti.QueuedAt != nil && ti.QueuedAt.Before(*ti.StartDate) {
				b.QX, b.QW = chartLabelW+scale(*ti.QueuedAt), scale(*ti.StartDate)-scale(*ti.QueuedAt)
			}
		}
		g.Bars = append(g.Bars, b)
	}
	return g
}

// durationChart is one task's duration over the DAG's newest runs.
type durationChart struct {
	TaskID string
	Max    string // the longest duration, the chart's full height
	Bars   []durationBar
	Width  int
}

// durationBar is one run's duration of the task.
type durationBar struct {
	RunID, State, Duration string
	X, Y, H                int
}

// durationHeight is a duration chart's plot height.
const durationHeight = 60

// buildDurations charts each task's duration (first start to last end of
// its instances) in each run, oldest run left, scaled per task.
func buildDurations(tasks []core.Task, runs []core.DagRun, counts []store.TaskInstanceStateCount, now time.Time) []durationChart {
	col := map[int64]int{}
	for i, r := range runs {
		col[r.ID] = i
	}
	type span struct {
		start, end *time.Time
		open       bool
		state      string
	}
	spans := map[string][]span{}
	for _, t := range tasks {
		spans[t.TaskID] = make([]span, len(runs))
	}
	for _, c := range counts {
		row, ok := spans[c.TaskID]
		i, okRun := col[c.DagRunID]
		if !ok || !okRun {
			continue
		}
		s := &row[i]
		if c.FirstStart != nil && (s.start == nil || c.FirstStart.Before(*s.start)) {
			s.start = c.FirstStart
		}
		if c.LastEnd != nil && (s.end == nil || c.LastEnd.After(*s.end)) {
			s.end = c.LastEnd
		}
		s.open = s.open || (c.FirstStart != nil && !c.State.Terminal())
		s.state = stateOf(c.State).Name
	}
	const pitch = 14
	out := make([]durationChart, 0, len(tasks))
	for _, t := range tasks {
		ch := durationChart{TaskID: t.TaskID, Width: len(runs)*pitch + 2}
		d := make([]time.Duration, len(runs))
		var longest time.Duration
		for i, s := range spans[t.TaskID] {
			if s.start == nil {
				continue
			}
			end := now
			if s.end != nil && !s.open {
				end = *s.end
			}
			d[i] = end.Sub(*s.start)
			longest = max(longest, d[i])
		}
		ch.Max = fmtDuration(longest)
		for i, s := range spans[t.TaskID] {
			if s.start == nil || longest <= 0 {
				continue
			}
			h := max(1, int(int64(durationHeight)*int64(d[i])/int64(longest)))
			ch.Bars = append(ch.Bars, durationBar{RunID: runs[i].RunID, State: s.state, Duration: fmtDuration(d[i]),
				X: 1 + i*pitch, Y: durationHeight - h, H: h})
		}
		out = append(out, ch)
	}
	return out
}
