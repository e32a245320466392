package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// etlState lists the keys of etl's task state as dag/run/task[/map_index]/key.
func (f *fixture) etlState() []string {
	return f.stateKeys(store.StateListParams{Kind: core.StateTask, DagID: "etl"})
}

// A task-state list narrows by run, task and map index; a clear takes one
// map index, or every map index of the task in the run, and nothing of
// other tasks or runs (docs/task-state.md).
func testTaskStateFiltersMapIndices(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	f.run("etl", "r2")
	for _, sc := range []core.StateScope{taskScope("m", 0), taskScope("m", 1), taskScope("t", -1)} {
		f.setTaskState(sc, "a", `1`, nil, false)
		f.setTaskState(sc, "b", `2`, nil, false)
	}
	f.setTaskState(core.TaskScope("etl", "r2", "m", 0), "a", `1`, nil, false)

	mi := 1
	got, err := f.st.StateList(f.ctx, &store.StateListParams{Kind: core.StateTask, DagID: "etl", RunID: "r1", TaskID: "m", MapIndex: &mi})
	must(t, err, "list one map index")
	if len(got) != 2 || got[0].Key != "a" || got[1].Key != "b" || got[0].Scope.MapIndex != 1 || string(got[1].Value) != "2" {
		t.Errorf("list m[1] = %+v", got)
	}
	if got := f.stateKeys(store.StateListParams{Kind: core.StateTask, DagID: "etl", RunID: "r2"}); !cmp.Equal(got, []string{"etl/r2/m/0/a"}) {
		t.Errorf("list of run r2 = %v", got)
	}
	_, err = f.st.StateList(f.ctx, &store.StateListParams{Kind: core.StateTask})
	wantErr(t, err, core.ErrInvalid, "list task state without a dag")

	_, err = f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: taskScope("m", 1)})
	must(t, err, "clear m[1]")
	want := []string{"etl/r1/m/0/a", "etl/r1/m/0/b", "etl/r1/t/a", "etl/r1/t/b", "etl/r2/m/0/a"}
	if got := f.etlState(); !cmp.Equal(got, want) {
		t.Errorf("after clear of m[1]: keys %v, want %v", got, want)
	}
	n, err := f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: taskScope("m", 0), AllMapIndices: true})
	must(t, err, "clear every map index of m")
	if want := []string{"etl/r1/t/a", "etl/r1/t/b", "etl/r2/m/0/a"}; n != 2 || !cmp.Equal(f.etlState(), want) {
		t.Errorf("after clear of every map index of m in r1: removed %d, keys %v (r2 and t must stay)", n, f.etlState())
	}
}

// With ClearTaskState a success deletes the instance's state in the same
// transaction; other outcomes, and a refused finish, keep it
// (docs/task-state.md, clear_on_success).
func testTaskStateClearOnSuccess(t *testing.T, f *fixture) {
	a, b := newTI("a", core.TIRunning), newTI("b", core.TIRunning)
	f.run("etl", "r1", a, b)
	f.setTaskState(taskScope("a", -1), "k", `1`, nil, false)
	f.setTaskState(taskScope("b", -1), "k", `1`, nil, false)

	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TIFailed, Now: f.now,
		ClearTaskState: true}), "finish b failed")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now,
		ClearTaskState: true}), "finish a success")
	if got := f.etlState(); !cmp.Equal(got, []string{"etl/r1/b/k"}) {
		t.Fatalf("after a succeeded with clear_on_success: keys %v, want only b's", got)
	}
	// A finish refused (b is no longer running) rolls the clear back.
	err := f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TISuccess, Now: f.now,
		ClearTaskState: true})
	wantErr(t, err, core.ErrConflict, "finish a finished try")
	if got := f.etlState(); !cmp.Equal(got, []string{"etl/r1/b/k"}) {
		t.Errorf("a refused finish deleted task state: keys %v", got)
	}
}

// Cleanup deletes task state whose non-null expires_at is past, in
// batches; rows without expiry and never-expire rows stay
// (docs/state-store-cleanup.md).
func testTaskStateExpiry(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	past, future := f.at(-time.Minute), f.at(time.Hour)
	for i := range 5 {
		f.setTaskState(taskScope("t", i), "old", `1`, &past, false)
	}
	f.setTaskState(taskScope("t", -1), "fresh", `1`, &future, false)
	f.setTaskState(taskScope("t", -1), "keep", `1`, nil, false)
	f.setTaskState(taskScope("t", -1), "forever", `1`, nil, true)
	if e, err := f.st.StateGet(f.ctx, taskScope("t", -1), "fresh"); err != nil || e.ExpiresAt == nil ||
		!e.ExpiresAt.Equal(future) || e.NeverExpire {
		t.Errorf("fresh = %+v, %v; want expires_at %s", e, err, future)
	}
	if e, err := f.st.StateGet(f.ctx, taskScope("t", -1), "forever"); err != nil || e.ExpiresAt != nil || !e.NeverExpire {
		t.Errorf("forever = %+v, %v; want never_expire and no expires_at", e, err)
	}

	stale := func(before time.Time, limit int) *store.StateStaleParams {
		return &store.StateStaleParams{Kind: core.StateTask, Before: before, Limit: limit}
	}
	exp, err := f.st.StateStale(f.ctx, stale(f.now, 0))
	must(t, err, "list expired")
	if len(exp) != 5 || exp[0].Scope.MapIndex != 0 || exp[4].Scope.MapIndex != 4 || exp[0].Key != "old" {
		t.Fatalf("expired = %+v, want the 5 'old' rows by map index", exp)
	}
	if exp, _ := f.st.StateStale(f.ctx, stale(f.now, 2)); len(exp) != 2 {
		t.Errorf("expired with limit 2 = %d rows", len(exp))
	}
	n, err := f.st.StateDeleteStale(f.ctx, stale(f.now, 2))
	must(t, err, "delete a batch")
	if n != 2 {
		t.Errorf("first batch deleted %d, want 2", n)
	}
	n, err = f.st.StateDeleteStale(f.ctx, stale(f.now, 0))
	must(t, err, "delete the rest in one statement")
	if n != 3 {
		t.Errorf("one-statement delete removed %d, want 3", n)
	}
	if got := f.etlState(); !cmp.Equal(got, []string{"etl/r1/t/forever", "etl/r1/t/fresh", "etl/r1/t/keep"}) {
		t.Errorf("after cleanup: %v, want forever, fresh and keep", got)
	}
	// Far in the future only the row with an expiry goes.
	n, err = f.st.StateDeleteStale(f.ctx, stale(f.at(1000*time.Hour), 0))
	must(t, err, "delete later")
	if n != 1 || !cmp.Equal(f.etlState(), []string{"etl/r1/t/forever", "etl/r1/t/keep"}) {
		t.Errorf("later cleanup removed %d, left %v", n, f.etlState())
	}
}

// StateTry reads a try's scope, try number, state and DAG version as they
// are now (a finished try reads as finished at once) and ErrNotFound for
// an id that is not a current try (docs/architecture.md, execution token).
func testStateTry(t *testing.T, f *fixture) {
	a := newTI("a", core.TIRunning)
	f.run("etl", "r1", a)
	got, err := f.st.StateTry(f.ctx, a.ID)
	must(t, err, "try of a")
	ti, err := f.st.TaskInstanceGet(f.ctx, a.ID)
	must(t, err, "get a")
	want := &store.StateTry{Scope: taskScope("a", -1), TryNumber: ti.TryNumber, State: core.TIRunning,
		DagVersionID: ti.DagVersionID}
	if !cmp.Equal(got, want) {
		t.Fatalf("StateTry = %+v, want %+v", got, want)
	}
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now}), "finish a")
	got, err = f.st.StateTry(f.ctx, a.ID)
	must(t, err, "try of a after it finished")
	if got.State != core.TISuccess {
		t.Fatalf("after success StateTry state = %s, want success", got.State)
	}
	_, err = f.st.StateTry(f.ctx, uuid.NewString())
	wantErr(t, err, core.ErrNotFound, "try of an unknown id")
}
