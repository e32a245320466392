package scheduler_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func daily(id string, catchup bool, maxActive int) core.DAG {
	start := time.Date(2025, 2, 26, 0, 0, 0, 0, time.UTC) // t0 is 2025-03-01 12:00
	return core.DAG{DagID: id, Schedule: "@daily", StartDate: &start, Catchup: catchup, MaxActiveRuns: maxActive,
		Tasks: []core.Task{{TaskID: "a"}}}
}

func (h *harness) runIDs(dagID string) []string {
	h.t.Helper()
	list, err := h.st.DagRunList(h.ctx, &store.DagRunListParams{DagID: dagID})
	if err != nil {
		h.t.Fatal(err)
	}
	var ids []string
	for i := len(list) - 1; i >= 0; i-- {
		ids = append(ids, list[i].RunID)
	}
	return ids
}

func (h *harness) nextRunAfter(dagID string) *time.Time {
	h.t.Helper()
	d, err := h.st.DagGet(h.ctx, dagID)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.NextRunAfter
}

func TestCatchupCreatesEveryMissedInterval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, daily("cu", true, 0))
	h.step()
	want := []string{"scheduled__2025-02-26T00:00:00Z", "scheduled__2025-02-27T00:00:00Z", "scheduled__2025-02-28T00:00:00Z"}
	if diff := cmp.Diff(want, h.runIDs("cu")); diff != "" {
		t.Fatalf("runs (-want +got):\n%s", diff)
	}
	run, err := h.st.DagRunGet(h.ctx, "cu", want[2])
	if err != nil {
		t.Fatal(err)
	}
	if run.RunType != core.RunScheduled || !run.DataIntervalStart.Equal(time.Date(2025, 2, 28, 0, 0, 0, 0, time.UTC)) ||
		!run.DataIntervalEnd.Equal(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("run = %+v, want scheduled with interval [02-28, 03-01)", run)
	}
	if next := h.nextRunAfter("cu"); next == nil || !next.Equal(time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("next_run_after = %v, want 2025-03-02", next)
	}
	// Nothing more until the next interval ends; then exactly one more.
	h.clk.Advance(11 * time.Hour)
	h.step()
	if n := len(h.runIDs("cu")); n != 3 {
		t.Errorf("%d runs before the interval ended, want 3", n)
	}
	h.clk.Advance(time.Hour)
	h.step()
	if ids := h.runIDs("cu"); len(ids) != 4 || ids[3] != "scheduled__2025-03-01T00:00:00Z" {
		t.Errorf("runs = %v, want a fourth for 2025-03-01", ids)
	}
}

func TestNoCatchupCreatesOnlyTheLatest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, daily("nocu", false, 0))
	h.step()
	h.step()
	if diff := cmp.Diff([]string{"scheduled__2025-02-28T00:00:00Z"}, h.runIDs("nocu")); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// Airflow 3's CronTriggerTimetable: a run at each fire time, which is its
// logical date, with an empty data interval; without catchup the fire time
// just past (2025-03-01 00:00 at t0 12:00) runs at once, and the next
// waits for its own fire time, not for an interval after it.
func TestCronTriggerTimetableRunsAtEachFireTime(t *testing.T) {
	t.Parallel()
	catchup, latest := daily("trig_cu", true, 0), daily("trig", false, 0)
	catchup.Timetable, latest.Timetable = "CronTriggerTimetable", "CronTriggerTimetable"
	h := newHarness(t, catchup, latest)
	h.step()
	day := func(d int) time.Time { return time.Date(2025, 2, d, 0, 0, 0, 0, time.UTC) }
	want := []string{"scheduled__2025-02-26T00:00:00Z", "scheduled__2025-02-27T00:00:00Z", "scheduled__2025-02-28T00:00:00Z",
		"scheduled__2025-03-01T00:00:00Z"}
	if diff := cmp.Diff(want, h.runIDs("trig_cu")); diff != "" {
		t.Fatalf("catchup runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[3:], h.runIDs("trig")); diff != "" {
		t.Fatalf("runs without catchup (-want +got):\n%s", diff)
	}
	run, err := h.st.DagRunGet(h.ctx, "trig_cu", want[2])
	if err != nil {
		t.Fatal(err)
	}
	if !run.LogicalDate.Equal(day(28)) || !run.DataIntervalStart.Equal(day(28)) || !run.DataIntervalEnd.Equal(day(28)) {
		t.Errorf("run %s: logical date %v, interval [%v, %v], want all 2025-02-28", run.RunID, run.LogicalDate,
			run.DataIntervalStart, run.DataIntervalEnd)
	}
	if next := h.nextRunAfter("trig"); next == nil || !next.Equal(time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("next_run_after = %v, want 2025-03-02 (the next fire time)", next)
	}
	h.clk.Advance(12 * time.Hour)
	h.step()
	if ids := h.runIDs("trig"); len(ids) != 2 || ids[1] != "scheduled__2025-03-02T00:00:00Z" {
		t.Errorf("runs = %v, want a second at the fire time 2025-03-02", ids)
	}
}

func TestScheduledRunsRespectMaxActiveRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, daily("limited", true, 1))
	h.step()
	if ids := h.runIDs("limited"); len(ids) != 1 {
		t.Fatalf("runs = %v, want one (max_active_runs 1)", ids)
	}
	for i := 2; i <= 3; i++ {
		h.work(succeed)
		h.step()
		if ids := h.runIDs("limited"); len(ids) != i {
			t.Fatalf("after finishing a run: runs = %v, want %d", ids, i)
		}
	}
}

func TestPausedDagGetsNoScheduledRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, daily("off", true, 0))
	if err := h.st.DagSetPaused(h.ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	h.step()
	if ids := h.runIDs("off"); len(ids) != 0 {
		t.Errorf("paused DAG got runs %v", ids)
	}
}

func TestRunCreationBudgetStillCatchesUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, daily("many", true, 0))
	h.s.Config.MaxRunsToCreatePerLoop = 1
	// One wake-up still catches up fully, one run per pass.
	h.step()
	if n := len(h.runIDs("many")); n != 3 {
		t.Errorf("%d runs, want 3", n)
	}
}
