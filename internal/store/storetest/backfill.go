package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testBackfills: a backfill's row round-trips; its runs carry its id and
// list by it; pausing, failing its queued runs and completing it change
// what they say, once; DagRunJoinBackfill makes a run a backfill run.
func testBackfills(t *testing.T, f *fixture) {
	version := f.dag("etl")
	from, to := f.at(-72*time.Hour), f.at(-24*time.Hour)
	b, err := f.st.BackfillCreate(f.ctx, &store.BackfillCreateParams{DagID: "etl", FromDate: from, ToDate: to,
		DagRunConf: json.RawMessage(`{"x":1}`), ReprocessBehavior: core.ReprocessFailed, MaxActiveRuns: 2, Now: f.now})
	must(t, err, "create backfill")
	got, err := f.st.BackfillGet(f.ctx, b.ID)
	must(t, err, "get backfill")
	if !got.FromDate.Equal(from) || !got.ToDate.Equal(to) || string(got.DagRunConf) != `{"x":1}` || got.IsPaused ||
		got.ReprocessBehavior != core.ReprocessFailed || got.MaxActiveRuns != 2 || got.CompletedAt != nil || !got.CreatedAt.Equal(f.now) {
		t.Errorf("backfill as read = %+v, want it as created (%+v)", got, b)
	}
	var runIDs []int64
	for i, state := range []core.DagRunState{core.RunQueued, core.RunRunning, core.RunQueued} {
		ld := from.Add(time.Duration(i) * 24 * time.Hour)
		run, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "backfill__" + ld.Format(time.RFC3339),
			RunType: core.RunBackfill, State: state, LogicalDate: &ld, DagVersionID: version, Now: f.now, BackfillID: &b.ID})
		must(t, err, "create backfill run")
		if run.BackfillID == nil || *run.BackfillID != b.ID {
			t.Fatalf("created run's backfill id = %v, want %d", run.BackfillID, b.ID)
		}
		must(t, f.st.BackfillDagRunInsert(f.ctx, &core.BackfillDagRun{BackfillID: b.ID, DagRunID: &run.ID, LogicalDate: ld,
			SortOrdinal: i + 1}), "record backfill date")
		runIDs = append(runIDs, run.ID)
	}
	other := f.run("etl", "manual_1")
	listed, err := f.st.DagRunList(f.ctx, &store.DagRunListParams{BackfillID: b.ID})
	must(t, err, "list runs of backfill")
	if len(listed) != 3 || listed[0].BackfillID == nil || *listed[0].BackfillID != b.ID {
		t.Fatalf("runs of backfill = %v, want its 3", listed)
	}
	must(t, f.st.BackfillSetPaused(f.ctx, b.ID, true, f.at(time.Second)), "pause")
	wantErr(t, f.st.BackfillSetPaused(f.ctx, 999999, true, f.now), core.ErrNotFound, "pause unknown backfill")
	n, err := f.st.BackfillFailQueued(f.ctx, b.ID, f.at(time.Second))
	must(t, err, "fail queued")
	if n != 2 {
		t.Errorf("failed %d queued runs, want 2", n)
	}
	for i, want := range []core.DagRunState{core.RunFailed, core.RunRunning, core.RunFailed} {
		r, err := f.st.DagRunGetByID(f.ctx, runIDs[i])
		must(t, err, "get run")
		if r.State != want || (want == core.RunFailed && r.EndDate == nil) {
			t.Errorf("run %d: state %s end %v, want %s (failed runs ended)", i, r.State, r.EndDate, want)
		}
	}
	active, err := f.st.BackfillList(f.ctx, &store.BackfillListParams{DagID: "etl", OnlyActive: true})
	must(t, err, "list active")
	if len(active) != 1 || !active[0].IsPaused {
		t.Errorf("active backfills = %+v, want the paused one", active)
	}
	ok, err := f.st.BackfillComplete(f.ctx, b.ID, f.at(2*time.Second))
	must(t, err, "complete")
	again, err := f.st.BackfillComplete(f.ctx, b.ID, f.at(3*time.Second))
	must(t, err, "complete again")
	if !ok || again {
		t.Errorf("complete = %t then %t, want true then false", ok, again)
	}
	n, err = f.st.BackfillCount(f.ctx, &store.BackfillListParams{OnlyActive: true})
	must(t, err, "count active")
	if n != 0 {
		t.Errorf("%d active backfills after completion, want 0", n)
	}
	must(t, f.st.DagRunJoinBackfill(f.ctx, other.ID, b.ID), "join")
	joined, err := f.st.DagRunGetByID(f.ctx, other.ID)
	must(t, err, "get joined run")
	if joined.RunType != core.RunBackfill || joined.BackfillID == nil || *joined.BackfillID != b.ID {
		t.Errorf("joined run = type %s backfill %v, want backfill %d", joined.RunType, joined.BackfillID, b.ID)
	}
}

// testDagDelete: deleting a DAG removes its runs, task instances, XCom,
// task state and backfills on both engines, leaves other DAGs alone, and
// an unknown DAG is ErrNotFound.
func testDagDelete(t *testing.T, f *fixture) {
	run := f.run("etl", "r1", newTI("a", core.TINone))
	f.run("other", "o1", newTI("a", core.TINone))
	must(t, f.st.XComSet(f.ctx, &core.XCom{DagID: "etl", RunID: "r1", TaskID: "a", MapIndex: -1, Key: "k",
		Value: json.RawMessage(`1`), Timestamp: f.now}), "xcom")
	f.setTaskState(core.TaskScope("etl", "r1", "a", -1), "cursor", `1`, nil, true)
	f.setTaskState(core.TaskScope("other", "o1", "a", -1), "cursor", `2`, nil, true)
	_, err := f.st.BackfillCreate(f.ctx, &store.BackfillCreateParams{DagID: "etl", FromDate: f.now, ToDate: f.now,
		ReprocessBehavior: core.ReprocessNone, MaxActiveRuns: 1, Now: f.now})
	must(t, err, "backfill")

	must(t, f.st.DagDelete(f.ctx, "etl"), "delete dag")
	_, err = f.st.DagGet(f.ctx, "etl")
	wantErr(t, err, core.ErrNotFound, "get deleted dag")
	_, err = f.st.DagRunGetByID(f.ctx, run.ID)
	wantErr(t, err, core.ErrNotFound, "get run of deleted dag")
	for what, count := range map[string]func() (int, error){
		"task instances": func() (int, error) {
			return f.st.TaskInstanceCount(f.ctx, &store.TaskInstanceListParams{DagID: "etl"})
		},
		"xcom": func() (int, error) {
			return f.st.XComCount(f.ctx, &store.XComListParams{DagID: "etl", RunID: "r1"})
		},
		"backfills": func() (int, error) { return f.st.BackfillCount(f.ctx, &store.BackfillListParams{DagID: "etl"}) },
	} {
		n, err := count()
		must(t, err, "count "+what)
		if n != 0 {
			t.Errorf("%d %s of the deleted dag remain", n, what)
		}
	}
	if keys := f.stateKeys(store.StateListParams{Kind: core.StateTask, DagID: "etl"}); len(keys) != 0 {
		t.Errorf("task state of the deleted dag remains: %v", keys)
	}
	if keys := f.stateKeys(store.StateListParams{Kind: core.StateTask, DagID: "other"}); len(keys) != 1 {
		t.Errorf("task state of the other dag = %v, want its key", keys)
	}
	if n, _ := f.st.DagRunCount(f.ctx, &store.DagRunListParams{DagID: "other"}); n != 1 {
		t.Errorf("the other dag has %d runs, want 1", n)
	}
	wantErr(t, f.st.DagDelete(f.ctx, "etl"), core.ErrNotFound, "delete unknown dag")
}
