package runs

import (
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

func TestPlanBackfill(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	run := func(id int64, d int, state core.DagRunState) core.DagRun {
		ld := day(d)
		return core.DagRun{ID: id, RunID: "r", LogicalDate: &ld, State: state}
	}
	existing := []core.DagRun{run(1, 1, core.RunSuccess), run(2, 2, core.RunFailed), run(3, 3, core.RunRunning),
		run(4, 4, core.RunQueued), run(5, 5, core.RunFailed), run(6, 5, core.RunSuccess)}
	type step struct {
		day    int
		action BackfillAction
		reason string
	}
	tests := []struct {
		name      string
		reprocess core.ReprocessBehavior
		backwards bool
		want      []step
	}{
		{name: "none keeps every run", reprocess: core.ReprocessNone, want: []step{
			{1, BackfillSkip, core.BackfillAlreadyExists}, {2, BackfillSkip, core.BackfillAlreadyExists},
			{3, BackfillSkip, core.BackfillInFlight}, {4, BackfillSkip, core.BackfillInFlight},
			{5, BackfillSkip, core.BackfillAlreadyExists}, {6, BackfillCreate, ""}}},
		{name: "failed reruns failed runs; the newest run of a date counts", reprocess: core.ReprocessFailed, want: []step{
			{1, BackfillSkip, core.BackfillAlreadyExists}, {2, BackfillClear, ""},
			{3, BackfillSkip, core.BackfillInFlight}, {4, BackfillSkip, core.BackfillInFlight},
			{5, BackfillSkip, core.BackfillAlreadyExists}, {6, BackfillCreate, ""}}},
		{name: "completed reruns finished runs, never in-flight ones", reprocess: core.ReprocessCompleted, backwards: true, want: []step{
			{6, BackfillCreate, ""}, {5, BackfillClear, ""}, {4, BackfillSkip, core.BackfillInFlight},
			{3, BackfillSkip, core.BackfillInFlight}, {2, BackfillClear, ""}, {1, BackfillClear, ""}}},
	}
	spec := &core.DAG{DagID: "etl", Schedule: "@daily"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &BackfillRequest{DagID: "etl", From: day(1), To: day(6), Reprocess: tc.reprocess, RunBackwards: tc.backwards}
			if err := CheckBackfill(r); err != nil {
				t.Fatal(err)
			}
			got, err := PlanBackfill(spec, r, existing, day(20))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d steps, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if !g.Interval.Start.Equal(day(w.day)) || g.Action != w.action || g.Reason != w.reason {
					t.Errorf("step %d = %s %s %q, want day %d %s %q", i, g.Interval.Start.Format(time.DateOnly), g.Action, g.Reason,
						w.day, w.action, w.reason)
				}
			}
		})
	}
}

func TestCheckBackfillRejects(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		r    BackfillRequest
		want string
	}{
		{BackfillRequest{From: day(2), To: day(1)}, "is before from_date"},
		{BackfillRequest{From: day(1), To: day(2), Reprocess: "all"}, `reprocess_behavior "all"`},
		{BackfillRequest{From: day(1), To: day(2), MaxActiveRuns: -1}, "max_active_runs -1"},
		{BackfillRequest{From: day(1), To: day(2), DagRunConf: []byte(`[1]`)}, "dag_run_conf"},
	} {
		err := CheckBackfill(&tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckBackfill(%+v) = %v, want %q", tc.r, err, tc.want)
		}
	}
	if _, err := PlanBackfill(&core.DAG{DagID: "m"}, &BackfillRequest{From: day(1), To: day(2)}, nil, day(9)); err == nil ||
		!strings.Contains(err.Error(), "has no schedule") {
		t.Errorf("a DAG without a schedule: err = %v", err)
	}
}
