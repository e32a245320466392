package service_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// After a DAG's timetable switched back from CronTriggerTimetable to data
// intervals, the next runs are the scheduler's: the interval starting at
// the last trigger run's logical date is skipped (its run id is taken),
// the ones after follow.
func TestNextRunsAfterATimetableSwitch(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	day := func(d int) time.Time { return time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC) }
	start := day(1)
	syncDAG(t, st, core.DAG{DagID: "cu", Schedule: "@daily", StartDate: &start, Catchup: true,
		Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
	v, err := st.DagVersionLatest(t.Context(), "cu")
	if err != nil {
		t.Fatal(err)
	}
	last := day(3) // the trigger timetable's last run: [3, 3]
	if _, err := st.DagRunCreate(t.Context(), &store.DagRunCreateParams{DagID: "cu", RunID: "scheduled__2025-03-03T00:00:00Z",
		RunType: core.RunScheduled, State: core.RunSuccess, LogicalDate: &last, DataIntervalStart: &last, DataIntervalEnd: &last,
		DagVersionID: v.ID, Now: t0}); err != nil {
		t.Fatal(err)
	}
	got, err := newSvc(st, clocktest.New(day(2).AddDate(0, 1, 0))).NextDataIntervals(t.Context(), "cu", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Start.Equal(day(4)) || !got[1].Start.Equal(day(5)) {
		t.Errorf("next runs = %v, want the intervals starting 03-04 and 03-05", got)
	}
}
