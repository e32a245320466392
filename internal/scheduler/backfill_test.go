package scheduler_test

import (
	"os"
	"sort"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// engines runs fn on SQLite and on PostgreSQL.
func engines(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); fn(t, sqlitetest.Open(t)) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); fn(t, postgrestest.Open(t)) })
}

// backfillDag is a daily two-task DAG whose own max_active_runs (16) is
// wider than the backfills' limit, so only the backfill's bounds them.
func backfillDag() core.DAG {
	start := t0.AddDate(0, 0, -120)
	return core.DAG{DagID: "etl", Schedule: "@daily", StartDate: &start, MaxActiveRuns: 16,
		Tasks: []core.Task{{TaskID: "extract", Operator: "noop"}, {TaskID: "load", Operator: "noop", DependsOn: []string{"extract"}}}}
}

// round is one scheduler pass and one worker round a minute later.
func (h *harness) round() {
	h.t.Helper()
	h.step()
	h.clk.Advance(time.Minute)
	h.work(succeed)
	h.clk.Advance(time.Minute)
}

// backfillRuns returns a backfill's runs.
func (h *harness) backfillRuns(id int64) []core.DagRun {
	h.t.Helper()
	list, err := h.st.DagRunList(h.ctx, &store.DagRunListParams{BackfillID: id})
	if err != nil {
		h.t.Fatal(err)
	}
	return list
}

// TestBackfillRunsWithinMaxActiveRuns: a backfill over 30 days with
// max_active_runs 3 runs 30 backfill runs, never more than 3 at once (by
// their start and end dates), oldest first, and then completes.
func TestBackfillRunsWithinMaxActiveRuns(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st store.Store) {
		h := newHarnessOn(t, st, backfillDag())
		from := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		res, err := h.svc(h.clk).CreateBackfill(h.ctx, core.System, runs.BackfillRequest{DagID: "etl",
			From: from, To: from.AddDate(0, 0, 29), MaxActiveRuns: 3})
		if err != nil {
			t.Fatal(err)
		}
		b := res.Backfill
		for i := 0; i < 200; i++ {
			h.round()
			if got, _ := st.BackfillGet(h.ctx, b.ID); got.CompletedAt != nil {
				break
			}
		}
		list := h.backfillRuns(b.ID)
		if len(list) != 30 {
			t.Fatalf("backfill made %d runs, want 30", len(list))
		}
		for _, r := range list {
			if r.State != core.RunSuccess || r.RunType != core.RunBackfill {
				t.Errorf("run %s: %s %s, want a successful backfill run", r.RunID, r.RunType, r.State)
			}
		}
		if got := weirtest.MostAtOnce(list); got != 3 {
			t.Errorf("at most %d backfill runs ran at once, want 3 (max_active_runs)", got)
		}
		sort.Slice(list, func(i, j int) bool { // by start, then (runs started together) by logical date
			if !list[i].StartDate.Equal(*list[j].StartDate) {
				return list[i].StartDate.Before(*list[j].StartDate)
			}
			return list[i].LogicalDate.Before(*list[j].LogicalDate)
		})
		for i := 1; i < len(list); i++ {
			if list[i].LogicalDate.Before(*list[i-1].LogicalDate) {
				t.Errorf("run %s started before the older %s", list[i-1].RunID, list[i].RunID)
			}
		}
		got, err := st.BackfillGet(h.ctx, b.ID)
		if err != nil || got.CompletedAt == nil {
			t.Errorf("backfill after its runs: %+v, %v; want completed", got, err)
		}
	})
}

// TestBackfillCancelMidway: cancelling a backfill after some runs marks
// its runs not started failed, lets the running ones finish, starts no run
// afterwards and completes the backfill.
func TestBackfillCancelMidway(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st store.Store) {
		h := newHarnessOn(t, st, backfillDag())
		from := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		svc := h.svc(h.clk)
		res, err := svc.CreateBackfill(h.ctx, core.System, runs.BackfillRequest{DagID: "etl",
			From: from, To: from.AddDate(0, 0, 29), MaxActiveRuns: 3, RunBackwards: true})
		if err != nil {
			t.Fatal(err)
		}
		b := res.Backfill
		for range 7 {
			h.round()
		}
		h.step() // some runs are running now
		cancelled, err := svc.CancelBackfill(h.ctx, core.System, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		at := h.clk.Now()
		if cancelled.CompletedAt == nil || !cancelled.IsPaused {
			t.Errorf("cancelled backfill = %+v, want paused and completed", cancelled)
		}
		if _, err := svc.CancelBackfill(h.ctx, core.System, b.ID); err == nil {
			t.Error("cancelling a completed backfill again: no error")
		}
		for range 10 {
			h.round()
		}
		list := h.backfillRuns(b.ID)
		if len(list) != 30 {
			t.Fatalf("backfill has %d runs, want 30", len(list))
		}
		var succeeded, notStarted int
		for _, r := range list {
			switch {
			case r.State == core.RunSuccess:
				succeeded++
			case r.State == core.RunFailed && r.StartDate == nil:
				notStarted++
			default:
				t.Errorf("run %s: %s started %v, want success, or failed never started", r.RunID, r.State, r.StartDate)
			}
			if r.StartDate != nil && r.StartDate.After(at) {
				t.Errorf("run %s started at %s, after the cancel at %s", r.RunID, r.StartDate, at)
			}
		}
		if succeeded == 0 || notStarted == 0 || succeeded+notStarted != 30 {
			t.Errorf("%d succeeded and %d never started, want some of each (30 in all)", succeeded, notStarted)
		}
		if got := weirtest.MostAtOnce(list); got > 3 {
			t.Errorf("%d backfill runs ran at once, want at most 3", got)
		}
	})
}
