package ui

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestBuildGantt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	tis := []core.TaskInstance{
		{TaskID: "extract", MapIndex: -1, State: core.TISuccess, QueuedAt: at(0), StartDate: at(10), EndDate: at(50)},
		{TaskID: "fan", MapIndex: 0, State: core.TIRunning, QueuedAt: at(50), StartDate: at(60)},
		{TaskID: "load", MapIndex: -1, State: core.TINone},
	}
	g := buildGantt(tis, *at(100))
	want := []ganttBar{
		{Label: "extract", State: "success", Duration: "40.0 s", Y: 2, QX: chartLabelW, QW: 80, X: chartLabelW + 80, W: 320},
		{Label: "fan [0]", State: "running", Duration: "40.0 s", Y: 2 + barY, QX: chartLabelW + 400, QW: 80, X: chartLabelW + 480, W: 320},
		{Label: "load", State: "none", Y: 2 + 2*barY},
	}
	if diff := cmp.Diff(want, g.Bars); diff != "" {
		t.Errorf("bars (-want +got):\n%s", diff)
	}
	if g.Span != "1 min 40 s" {
		t.Errorf("span = %q, want the run's 100 s", g.Span)
	}
}

func TestBuildDurations(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	runs := []core.DagRun{{ID: 1, RunID: "r1"}, {ID: 2, RunID: "r2"}, {ID: 3, RunID: "r3"}}
	counts := []store.TaskInstanceStateCount{
		{DagRunID: 1, TaskID: "a", State: core.TISuccess, Count: 1, FirstStart: at(0), LastEnd: at(30)},
		{DagRunID: 2, TaskID: "a", State: core.TIFailed, Count: 1, FirstStart: at(0), LastEnd: at(60)},
		{DagRunID: 3, TaskID: "a", State: core.TIRunning, Count: 1, FirstStart: at(0)},
	}
	got := buildDurations([]core.Task{{TaskID: "a"}, {TaskID: "b"}}, runs, counts, *at(15))
	want := []durationBar{
		{RunID: "r1", State: "success", Duration: "30.0 s", X: 1, Y: 30, H: 30},
		{RunID: "r2", State: "failed", Duration: "1 min 0 s", X: 15, Y: 0, H: 60},
		{RunID: "r3", State: "running", Duration: "15.0 s", X: 29, Y: 45, H: 15},
	}
	if diff := cmp.Diff(want, got[0].Bars); diff != "" || got[0].Max != "1 min 0 s" {
		t.Errorf("durations of a (max %q) (-want +got):\n%s", got[0].Max, diff)
	}
	if len(got[1].Bars) != 0 {
		t.Errorf("b never ran but has bars %v", got[1].Bars)
	}
}
