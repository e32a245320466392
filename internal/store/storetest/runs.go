package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testDagRunCreateGet(t *testing.T, f *fixture) {
	version := f.dag("etl")
	logical := f.at(-24 * time.Hour)
	end := f.now
	p := &store.DagRunCreateParams{DagID: "etl", RunID: "scheduled__1", RunType: core.RunScheduled,
		State: core.RunQueued, LogicalDate: &logical, DataIntervalStart: &logical, DataIntervalEnd: &end,
		Conf: json.RawMessage(`{"x":1}`), DagVersionID: version, Now: f.now,
		TaskInstances: []store.NewTaskInstance{newTI("a", core.TINone), newTI("b", core.TINone)}}
	run, err := f.st.DagRunCreate(f.ctx, p)
	must(t, err, "create run")
	got, err := f.st.DagRunGet(f.ctx, "etl", "scheduled__1")
	must(t, err, "get run")
	if diff := cmp.Diff(run, got); diff != "" {
		t.Errorf("run as created vs as read (-created +read):\n%s", diff)
	}
	want := &core.DagRun{ID: run.ID, DagID: "etl", RunID: "scheduled__1", RunType: core.RunScheduled,
		State: core.RunQueued, LogicalDate: &logical, DataIntervalStart: &logical, DataIntervalEnd: &end,
		Conf: json.RawMessage(`{"x":1}`), DagVersionID: version, QueuedAt: f.now}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
	byID, err := f.st.DagRunGetByID(f.ctx, run.ID)
	must(t, err, "get run by id")
	if byID.RunID != "scheduled__1" {
		t.Errorf("by id: run id %q", byID.RunID)
	}
	for _, paused := range []bool{true, false} {
		must(t, f.st.DagSetPaused(f.ctx, "etl", paused), "pause")
		read, err := f.st.DagRunGetPausedWithTasks(f.ctx, run.ID, []string{"b", "nope", "a"})()
		must(t, err, "get run with its dag's pause and tasks")
		r, gotPaused, withTasks := read.Run, read.Paused, read.Tasks
		if diff := cmp.Diff(got, r); diff != "" || gotPaused != paused {
			t.Errorf("run and pause read together: paused %v, want %v; (-by key +with pause):\n%s", gotPaused, paused, diff)
		}
		listed, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
		must(t, err, "list task instances")
		if diff := cmp.Diff(listed, withTasks); diff != "" {
			t.Errorf("instances read with the run (-listed +with the run):\n%s", diff)
		}
	}
	tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	must(t, err, "list task instances")
	if len(tis) != 2 || tis[0].TaskID != "a" || tis[1].TaskID != "b" {
		t.Fatalf("task instances = %+v, want a and b", tis)
	}
	if none, err := f.st.DagRunGetPausedWithTasks(f.ctx, run.ID, []string{"nope"})(); err != nil || none.Run != nil || none.Tasks != nil {
		t.Errorf("a run without the tasks asked for: %+v, %v; want nothing, no error", none, err)
	}
	ti := tis[0]
	if ti.State != core.TINone || ti.TryNumber != 1 || ti.MaxTries != 1 || ti.Queue != core.DefaultQueue ||
		ti.Pool != core.DefaultPool || ti.PoolSlots != 1 || ti.MapIndex != core.NoMapIndex ||
		ti.DagVersionID != version || ti.DagID != "etl" || ti.RunID != "scheduled__1" || ti.DagRunID != run.ID {
		t.Errorf("new task instance = %+v, want state none, try 1 of 1, default queue and pool, version %d", ti, version)
	}
	_, err = f.st.DagRunGet(f.ctx, "etl", "nope")
	wantErr(t, err, core.ErrNotFound, "get unknown run")
	_, err = f.st.DagRunGetByID(f.ctx, 999999)
	wantErr(t, err, core.ErrNotFound, "get unknown run id")
	if none, err := f.st.DagRunGetPausedWithTasks(f.ctx, 999999, []string{"a"})(); err != nil || none.Run != nil || none.Tasks != nil {
		t.Errorf("an unknown run id with its tasks: %+v, %v; want nothing, no error", none, err)
	}
	_, err = f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "no_such_dag", RunID: "r",
		RunType: core.RunManual, State: core.RunQueued, Now: f.now})
	wantErr(t, err, core.ErrNotFound, "create run of unknown dag")
}

// In a transaction the read of a run with its instances gives what its
// statement saw when it was asked for, before the transaction's later
// writes, even when those were sent first (PostgreSQL sends it with the
// next statement); an unread one does not hold the transaction up.
func testDagRunGetWithTasksInTx(t *testing.T, f *fixture) {
	run := f.run("etl", "r1", newTI("a", core.TINone))
	tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	must(t, err, "list")
	a := tis[0]
	must(t, f.st.WithTx(f.ctx, func(tx store.Store) error {
		before := tx.DagRunGetPausedWithTasks(f.ctx, run.ID, []string{"a"})
		_ = tx.DagRunGetPausedWithTasks(f.ctx, run.ID, []string{"a"}) // never read
		if _, err := tx.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{a.ID},
			From: []core.TIState{core.TINone}, To: core.TIScheduled, Now: f.now}); err != nil {
			return err
		}
		after, err := tx.DagRunGetPausedWithTasks(f.ctx, run.ID, []string{"a"})()
		if err != nil {
			return err
		}
		seen, err := before()
		if err != nil {
			return err
		}
		if len(seen.Tasks) != 1 || seen.Tasks[0].State != core.TINone || seen.Run == nil || seen.Run.ID != run.ID ||
			len(after.Tasks) != 1 || after.Tasks[0].State != core.TIScheduled {
			t.Errorf("read before the update: %+v; after it: %+v; want a none, then scheduled", seen.Tasks, after.Tasks)
		}
		return nil
	}), "read a run with its instances around an update in a transaction")
	if got := f.get(a.ID); got.State != core.TIScheduled {
		t.Errorf("after the transaction: %s, want scheduled", got.State)
	}
}

func testDagRunDuplicateConflict(t *testing.T, f *fixture) {
	f.run("etl", "r1", newTI("a", core.TINone))
	_, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "r1",
		RunType: core.RunManual, State: core.RunQueued, Now: f.now,
		TaskInstances: []store.NewTaskInstance{newTI("a", core.TINone)}})
	wantErr(t, err, core.ErrConflict, "duplicate run")
	tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagID: "etl"})
	must(t, err, "list")
	if len(tis) != 1 {
		t.Errorf("after a rejected duplicate there are %d task instances, want 1", len(tis))
	}
	f.run("other", "r1") // same run id, other DAG: fine
}

func testDagRunSetState(t *testing.T, f *fixture) {
	run := f.run("etl", "r1")
	set := func(from []core.DagRunState, to core.DagRunState, at time.Time) bool {
		t.Helper()
		ok, err := f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: run.ID, From: from, To: to, Now: at})
		must(t, err, "set run state")
		return ok
	}
	if set([]core.DagRunState{core.RunRunning}, core.RunSuccess, f.now) {
		t.Fatal("queued run moved although From was [running]")
	}
	if !set([]core.DagRunState{core.RunQueued}, core.RunRunning, f.at(time.Second)) {
		t.Fatal("queued run did not move to running")
	}
	if !set(nil, core.RunRunning, f.at(time.Minute)) {
		t.Fatal("empty From must allow any state")
	}
	if !set([]core.DagRunState{core.RunRunning}, core.RunFailed, f.at(time.Hour)) {
		t.Fatal("running run did not move to failed")
	}
	got, err := f.st.DagRunGetByID(f.ctx, run.ID)
	must(t, err, "get")
	if got.State != core.RunFailed || got.StartDate == nil || !got.StartDate.Equal(f.at(time.Second)) ||
		got.EndDate == nil || !got.EndDate.Equal(f.at(time.Hour)) {
		t.Errorf("run = state %s start %v end %v; want failed, first start kept, end set", got.State, got.StartDate, got.EndDate)
	}
	if !set(nil, core.RunQueued, f.at(2*time.Hour)) {
		t.Fatal("rerun to queued failed")
	}
	got, err = f.st.DagRunGetByID(f.ctx, run.ID)
	must(t, err, "get")
	if got.EndDate != nil || got.StartDate != nil || !got.QueuedAt.Equal(f.at(2*time.Hour)) {
		t.Errorf("after re-queue: start %v end %v queued at %v; want no dates but queued at the re-queue", got.StartDate, got.EndDate, got.QueuedAt)
	}
	if !set([]core.DagRunState{core.RunQueued}, core.RunRunning, f.at(3*time.Hour)) {
		t.Fatal("re-queued run did not start")
	}
	if got, _ = f.st.DagRunGetByID(f.ctx, run.ID); got.StartDate == nil || !got.StartDate.Equal(f.at(3*time.Hour)) {
		t.Errorf("re-queued run started at %v, want its new start", got.StartDate)
	}
	_, err = f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: 999999, To: core.RunRunning, Now: f.now})
	wantErr(t, err, core.ErrNotFound, "set state of unknown run")
}

func testDagRunListLatestCount(t *testing.T, f *fixture) {
	version := f.dag("etl")
	for i, rt := range []core.RunType{core.RunScheduled, core.RunScheduled, core.RunManual, core.RunBackfill} {
		logical := f.at(time.Duration(i) * time.Hour)
		if rt == core.RunBackfill {
			logical = f.at(-time.Hour)
		}
		if rt == core.RunManual {
			logical = f.at(100 * time.Hour)
		}
		_, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: string(rt) + "_" + string(rune('a'+i)),
			RunType: rt, State: core.RunQueued, LogicalDate: &logical, DagVersionID: version, Now: f.at(time.Duration(i) * time.Second)})
		must(t, err, "create run")
	}
	f.run("other", "o1")
	latest, err := f.st.DagRunLatestScheduled(f.ctx, "etl")
	must(t, err, "latest scheduled")
	if latest.RunID != "scheduled_b" {
		t.Errorf("latest scheduled = %s, want scheduled_b (manual runs do not count)", latest.RunID)
	}
	_, err = f.st.DagRunLatestScheduled(f.ctx, "other")
	wantErr(t, err, core.ErrNotFound, "latest scheduled of a DAG with only manual runs")

	runs, err := f.st.DagRunList(f.ctx, &store.DagRunListParams{DagID: "etl"})
	must(t, err, "list")
	if len(runs) != 4 || runs[0].RunID != "backfill_d" || runs[3].RunID != "scheduled_a" {
		t.Errorf("runs of etl = %v, want 4, newest first", runIDs(runs))
	}
	_, err = f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: runs[0].ID, To: core.RunSuccess, Now: f.now})
	must(t, err, "set state")
	done, err := f.st.DagRunList(f.ctx, &store.DagRunListParams{States: []core.DagRunState{core.RunSuccess}})
	must(t, err, "list success")
	if len(done) != 1 || done[0].RunID != "backfill_d" {
		t.Errorf("successful runs = %v, want [backfill_d]", runIDs(done))
	}
	page, err := f.st.DagRunList(f.ctx, &store.DagRunListParams{Page: store.Page{Limit: 2, Offset: 1}})
	must(t, err, "page")
	if len(page) != 2 || page[0].RunID != "backfill_d" {
		t.Errorf("page = %v, want [backfill_d manual_c]", runIDs(page))
	}
	from, to := f.at(0), f.at(time.Hour)
	filters := []struct {
		p    store.DagRunListParams
		want []string
	}{
		{store.DagRunListParams{DagID: "etl", RunTypes: []core.RunType{core.RunScheduled, core.RunBackfill}},
			[]string{"backfill_d", "scheduled_b", "scheduled_a"}},
		{store.DagRunListParams{DagID: "etl", LogicalDateGTE: &from, LogicalDateLTE: &to}, []string{"scheduled_b", "scheduled_a"}},
		{store.DagRunListParams{DagID: "etl", LogicalDateGTE: &to}, []string{"manual_c", "scheduled_b"}},
		{store.DagRunListParams{DagIDs: []string{"other", "none"}}, []string{"o1"}},
		{store.DagRunListParams{IDs: []int64{runs[3].ID, runs[1].ID}}, []string{"manual_c", "scheduled_a"}},
		{store.DagRunListParams{DagID: "etl", LogicalDateLTE: &from, RunTypes: []core.RunType{core.RunBackfill}}, []string{"backfill_d"}},
		{store.DagRunListParams{DagID: "etl", RunTypes: []core.RunType{core.RunAssetTriggered}}, nil},
	}
	for _, tt := range filters {
		got, err := f.st.DagRunList(f.ctx, &tt.p)
		must(t, err, "list filtered")
		n, err := f.st.DagRunCount(f.ctx, &tt.p)
		must(t, err, "count filtered")
		if diff := cmp.Diff(tt.want, runIDs(got)); diff != "" || n != len(tt.want) {
			t.Errorf("runs with types %v logical date %v..%v: count %d, (-want +got):\n%s", tt.p.RunTypes, tt.p.LogicalDateGTE, tt.p.LogicalDateLTE, n, diff)
		}
	}
	counts, err := f.st.DagRunCountByState(f.ctx, "etl")
	must(t, err, "count")
	if diff := cmp.Diff(map[core.DagRunState]int{core.RunQueued: 3, core.RunSuccess: 1}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// A `weir dags test` run records its process's job row; DagRunList's Tests
// keeps such runs alone, with that id.
func testDagRunTests(t *testing.T, f *fixture) {
	version := f.dag("etl")
	f.run("etl", "manual")
	for _, id := range []string{"test_a", "test_b"} {
		_, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: id, RunType: core.RunManual,
			State: core.RunRunning, DagVersionID: version, Now: f.now, TestJobID: "job-" + id})
		must(t, err, "create a test's run")
	}
	done, err := f.st.DagRunGet(f.ctx, "etl", "test_b")
	must(t, err, "get")
	_, err = f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: done.ID, To: core.RunFailed, Now: f.now})
	must(t, err, "end a test's run")
	p := store.DagRunListParams{Tests: true, States: []core.DagRunState{core.RunQueued, core.RunRunning}}
	got, err := f.st.DagRunList(f.ctx, &p)
	must(t, err, "list the tests' unfinished runs")
	if len(got) != 1 || got[0].RunID != "test_a" || got[0].TestJobID != "job-test_a" {
		t.Errorf("unfinished test runs = %+v, want test_a of job-test_a", got)
	}
	if n, err := f.st.DagRunCount(f.ctx, &store.DagRunListParams{Tests: true}); err != nil || n != 2 {
		t.Errorf("test runs counted %d (%v), want 2", n, err)
	}
	if done.TestJobID != "job-test_b" {
		t.Errorf("a test's run read back with TestJobID %q, want job-test_b", done.TestJobID)
	}
	// Cleared (or a task of it marked), a test's ended run is the
	// deployment's: no scheduler ends it as its test's.
	if _, err := f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: done.ID, To: core.RunQueued, Now: f.now}); err != nil {
		t.Fatal(err)
	}
	if reopened, err := f.st.DagRunGet(f.ctx, "etl", "test_b"); err != nil || reopened.TestJobID != "" {
		t.Errorf("a test's run reopened: %+v, %v; want no TestJobID", reopened, err)
	}
	running, err := f.st.DagRunGet(f.ctx, "etl", "test_a")
	must(t, err, "get")
	if _, err := f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: running.ID, To: core.RunRunning, Now: f.now}); err != nil {
		t.Fatal(err)
	}
	if still, err := f.st.DagRunGet(f.ctx, "etl", "test_a"); err != nil || still.TestJobID != "job-test_a" {
		t.Errorf("a test's running run set running: %+v, %v; want its TestJobID kept", still, err)
	}
	manual, err := f.st.DagRunGet(f.ctx, "etl", "manual")
	must(t, err, "get")
	if manual.TestJobID != "" {
		t.Errorf("a manual run read back with TestJobID %q, want none", manual.TestJobID)
	}
}

func runIDs(rs []core.DagRun) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.RunID)
	}
	return out
}

// testDagRunPreviousSuccess: the successful run with the greatest logical
// date before a time, of any run type; not a failed one, not one at or
// after the time, not another DAG's.
func testDagRunPreviousSuccess(t *testing.T, f *fixture) {
	version := f.dag("inc")
	for i, c := range []struct {
		id    string
		at    time.Duration
		state core.DagRunState
	}{{"old", 1, core.RunSuccess}, {"manual_ok", 2, core.RunSuccess}, {"broken", 3, core.RunFailed}, {"now", 4, core.RunSuccess}} {
		logical := f.at(c.at * time.Hour)
		r, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "inc", RunID: c.id, RunType: core.RunManual,
			State: core.RunQueued, LogicalDate: &logical, DagVersionID: version, Now: f.at(time.Duration(i) * time.Second)})
		must(t, err, "create run")
		_, err = f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: r.ID, To: c.state, Now: f.now})
		must(t, err, "end run")
	}
	prev, err := f.st.DagRunPreviousSuccess(f.ctx, "inc", f.at(4*time.Hour))
	must(t, err, "previous success")
	if prev.RunID != "manual_ok" {
		t.Errorf("previous success before now's = %s, want manual_ok (broken failed)", prev.RunID)
	}
	_, err = f.st.DagRunPreviousSuccess(f.ctx, "inc", f.at(time.Hour))
	wantErr(t, err, core.ErrNotFound, "previous success before the first run")
	_, err = f.st.DagRunPreviousSuccess(f.ctx, "etl", f.at(1000*time.Hour))
	wantErr(t, err, core.ErrNotFound, "previous success of a DAG without successful runs")
}

// testDagRunListRanges: runs are listed by when they started, ended and
// could run (their logical date, else when they were queued), both ends
// included, and by a text their id contains; a run without a start or an
// end is left out by a bounded range.
func testDagRunListRanges(t *testing.T, f *fixture) {
	started := f.run("etl", "Manual__A")
	f.run("etl", "manual__b")
	must2 := func(_ bool, err error) {
		t.Helper()
		must(t, err, "set run state")
	}
	must2(f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: started.ID, To: core.RunRunning, Now: f.at(time.Minute)}))
	must2(f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: started.ID, To: core.RunSuccess, Now: f.at(time.Hour)}))
	at := func(d time.Duration) *time.Time { x := f.at(d); return &x }
	for _, tc := range []struct {
		what string
		p    store.DagRunListParams
		want string
	}{
		{"started from its start", store.DagRunListParams{StartDate: store.TimeRange{GTE: at(time.Minute)}}, "Manual__A"},
		{"started before its start", store.DagRunListParams{StartDate: store.TimeRange{LTE: at(time.Second)}}, ""},
		{"ended by its end", store.DagRunListParams{EndDate: store.TimeRange{LTE: at(time.Hour)}}, "Manual__A"},
		{"ended after", store.DagRunListParams{EndDate: store.TimeRange{GTE: at(2 * time.Hour)}}, ""},
		{"run_after from creation", store.DagRunListParams{RunAfter: store.TimeRange{GTE: at(0), LTE: at(0)}}, "Manual__A manual__b"},
		{"run_after later", store.DagRunListParams{RunAfter: store.TimeRange{GTE: at(time.Second)}}, ""},
		{"id containing a", store.DagRunListParams{RunIDSearch: "__A"}, "Manual__A"},
		{"id containing manual", store.DagRunListParams{RunIDSearch: "MANUAL"}, "Manual__A manual__b"},
	} {
		tc.p.OrderBy = "dag_run_id"
		runs, err := f.st.DagRunList(f.ctx, &tc.p)
		must(t, err, "list "+tc.what)
		n, err := f.st.DagRunCount(f.ctx, &tc.p)
		must(t, err, "count "+tc.what)
		var got []string
		for _, r := range runs {
			got = append(got, r.RunID)
		}
		if strings.Join(got, " ") != tc.want || n != len(got) {
			t.Errorf("%s: %v (count %d), want %q", tc.what, got, n, tc.want)
		}
	}
}

// testDagRunDelete: a run goes with its task instances; another run of
// the DAG stays; deleting it again is not found.
func testDagRunDelete(t *testing.T, f *fixture) {
	gone := f.run("etl", "r1", newTI("a", core.TINone))
	kept := f.run("etl", "r2", newTI("a", core.TINone))
	must(t, f.st.DagRunDelete(f.ctx, gone.ID), "delete r1")
	wantErr(t, f.st.DagRunDelete(f.ctx, gone.ID), core.ErrNotFound, "delete r1 again")
	runs, err := f.st.DagRunList(f.ctx, &store.DagRunListParams{DagID: "etl"})
	must(t, err, "list runs")
	tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagID: "etl"})
	must(t, err, "list task instances")
	if len(runs) != 1 || runs[0].ID != kept.ID || len(tis) != 1 || tis[0].DagRunID != kept.ID {
		t.Errorf("after deleting r1: runs %+v, task instances %+v; want r2 and its one", runs, tis)
	}
}
