package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestBuildGrid(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(sec int) *time.Time { v := now.Add(time.Duration(sec) * time.Second); return &v }
	tasks := []core.Task{{TaskID: "extract"}, {TaskID: "fan"}, {TaskID: "load"}}
	runs := []core.DagRun{
		{ID: 7, RunID: "r7", State: core.RunSuccess, StartDate: at(-100), EndDate: at(-40)},
		{ID: 9, RunID: "r9", State: core.RunRunning, StartDate: at(-30)},
	}
	cnt := func(run int64, task string, state core.TIState, n int, mapped bool, start, end *time.Time) store.TaskInstanceStateCount {
		return store.TaskInstanceStateCount{DagRunID: run, TaskID: task, State: state, Count: n, Mapped: mapped, FirstStart: start, LastEnd: end}
	}
	tests := []struct {
		name   string
		counts []store.TaskInstanceStateCount
		want   map[string][]gridCell // task → cells
		rows   []string
	}{{
		name: "unmapped tasks with durations, a running one measured to now",
		counts: []store.TaskInstanceStateCount{
			cnt(7, "extract", core.TISuccess, 1, false, at(-100), at(-99)),
			cnt(9, "extract", core.TIRunning, 1, false, at(-30), nil),
		},
		rows: []string{"extract", "fan", "load"},
		want: map[string][]gridCell{
			"extract": {{RunID: "r7", State: "success", Count: 1, Duration: "1.0 s"}, {RunID: "r9", State: "running", Count: 1, Duration: "30.0 s"}},
			"load":    {{RunID: "r7", State: "none", Missing: true}, {RunID: "r9", State: "none", Missing: true}},
		},
	}, {
		name: "a mapped task shows its most important state, the count and every state",
		counts: []store.TaskInstanceStateCount{
			cnt(7, "fan", core.TIFailed, 1, true, at(-90), at(-80)),
			cnt(7, "fan", core.TISuccess, 3, true, at(-95), at(-50)),
			cnt(9, "fan", core.TINone, 2, true, nil, nil),
			cnt(9, "fan", core.TISuccess, 1, true, at(-20), at(-10)),
		},
		rows: []string{"extract", "fan", "load"},
		want: map[string][]gridCell{
			"fan": {
				{RunID: "r7", State: "failed", Mapped: true, Count: 4, Detail: "1 failed, 3 success", Duration: "45.0 s"},
				{RunID: "r9", State: "none", Mapped: true, Count: 3, Detail: "2 no status, 1 success", Duration: "10.0 s"},
			},
		},
	}, {
		name: "a task only an older run has comes last; runs not shown are ignored",
		counts: []store.TaskInstanceStateCount{
			cnt(7, "old_task", core.TISkipped, 1, false, nil, nil),
			cnt(3, "gone", core.TISuccess, 1, false, nil, nil),
		},
		rows: []string{"extract", "fan", "load", "old_task"},
		want: map[string][]gridCell{
			"old_task": {{RunID: "r7", State: "skipped", Count: 1}, {RunID: "r9", State: "none", Missing: true}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := buildGrid("d", tasks, runs, tc.counts, now)
			var rows []string
			for _, r := range g.Rows {
				rows = append(rows, r.TaskID)
				if want, ok := tc.want[r.TaskID]; ok {
					if diff := cmp.Diff(want, r.Cells); diff != "" {
						t.Errorf("cells of %s (-want +got):\n%s", r.TaskID, diff)
					}
				}
			}
			if diff := cmp.Diff(tc.rows, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if g.Runs[0].Duration != "1 min 0 s" || g.Runs[1].Duration != "30.0 s" {
				t.Errorf("run durations = %q, %q; want 1 min 0 s and 30.0 s (running: to now)", g.Runs[0].Duration, g.Runs[1].Duration)
			}
		})
	}
}

// The hand-written grid escapes every id it writes, in text, attributes
// and paths.
func TestGridHTMLEscapes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	runs := []core.DagRun{{ID: 1, RunID: `x"><script>alert(1)</script>`, State: core.RunFailed}}
	counts := []store.TaskInstanceStateCount{{DagRunID: 1, TaskID: "t&<", State: core.TIFailed, Count: 1}}
	out := gridHTML(buildGrid("d/../e", []core.Task{{TaskID: "t&<"}}, runs, counts, now))
	for _, bad := range []string{"<script>", `x">`, "t&<", "/dags/d/../e"} {
		if strings.Contains(out, bad) {
			t.Errorf("grid HTML contains %q unescaped:\n%s", bad, out)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "t&amp;&lt;", "/dags/d%2F..%2Fe/runs/x%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E"} {
		if !strings.Contains(out, want) {
			t.Errorf("grid HTML lacks %q:\n%s", want, out)
		}
	}
}
