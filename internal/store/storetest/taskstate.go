package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// scope is the task-state scope of task t (map index mi) in etl/r1.
func scope(t string, mi int) store.TaskStateScope {
	return store.TaskStateScope{DagID: "etl", RunID: "r1", TaskID: t, MapIndex: mi}
}

// setState writes key with value under sc, written by try 1 of r1, expiring
// at expires (nil = never expires when never, else no expiry).
func (f *fixture) setState(sc store.TaskStateScope, key, value string, expires *time.Time, never bool) {
	f.t.Helper()
	must(f.t, f.st.TaskStateSet(f.ctx, &store.TaskStateSetParams{Scope: sc, Key: key, Value: json.RawMessage(value),
		Now: f.now, UpdatedByRun: sc.RunID, UpdatedByTry: 1, ExpiresAt: expires, NeverExpire: never}), "set "+key)
}

// stateKeys lists the keys of etl's task state as run/task[map_index]/key.
func (f *fixture) stateKeys() []string {
	f.t.Helper()
	all, err := f.st.TaskStateList(f.ctx, &store.TaskStateListParams{DagID: "etl"})
	must(f.t, err, "list task state")
	out := []string{}
	for _, e := range all {
		out = append(out, fmt.Sprintf("%s/%s[%d]/%s", e.RunID, e.TaskID, e.MapIndex, e.Key))
	}
	return out
}

// SPEC TS-1, TS-3, TS-6: values round-trip with their exact JSON text (an
// integer stays an integer), with the writer's run, try, time and expiry.
func testTaskStateRoundTrip(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	values := map[string]string{
		"int":    `42`,
		"big":    `9007199254740993`,
		"float":  `3.25`,
		"string": `"héllo \"quoted\" ✓"`,
		"bool":   `false`,
		"list":   `[1,"two",[3],{"four":4}]`,
		"object": `{"a":{"b":[true,null]},"empty":{}}`,
	}
	exp := f.at(6 * time.Hour)
	for k, v := range values {
		f.setState(scope("t", -1), k, v, &exp, false)
	}
	for k, v := range values {
		e, err := f.st.TaskStateGet(f.ctx, scope("t", -1), k)
		must(t, err, "get "+k)
		if string(e.Value) != v {
			t.Errorf("task state %s = %s, want exactly %s", k, e.Value, v)
		}
		if !e.UpdatedAt.Equal(f.now) || e.UpdatedByRun != "r1" || e.UpdatedByTry != 1 || e.ExpiresAt == nil ||
			!e.ExpiresAt.Equal(exp) || e.NeverExpire || e.Key != k || e.TaskStateScope != scope("t", -1) {
			t.Errorf("task state %s metadata = %+v", k, e)
		}
	}
	// Overwrite: new value, writer and retention replace the old ones.
	must(t, f.st.TaskStateSet(f.ctx, &store.TaskStateSetParams{Scope: scope("t", -1), Key: "int",
		Value: json.RawMessage(`43`), Now: f.at(time.Minute), UpdatedByRun: "r1", UpdatedByTry: 2, NeverExpire: true}), "overwrite")
	e, err := f.st.TaskStateGet(f.ctx, scope("t", -1), "int")
	must(t, err, "get overwritten")
	if string(e.Value) != "43" || e.UpdatedByTry != 2 || e.ExpiresAt != nil || !e.NeverExpire || !e.UpdatedAt.Equal(f.at(time.Minute)) {
		t.Errorf("overwritten entry = %+v", e)
	}

	_, err = f.st.TaskStateGet(f.ctx, scope("t", -1), "absent")
	wantErr(t, err, core.ErrNotFound, "get absent key")
	_, err = f.st.TaskStateGet(f.ctx, scope("t", 0), "int")
	wantErr(t, err, core.ErrNotFound, "another map index is another scope")
	err = f.st.TaskStateSet(f.ctx, &store.TaskStateSetParams{Scope: store.TaskStateScope{DagID: "etl", RunID: "nope",
		TaskID: "t", MapIndex: -1}, Key: "k", Value: json.RawMessage(`1`), Now: f.now})
	wantErr(t, err, core.ErrNotFound, "set on an unknown run")
	err = f.st.TaskStateSet(f.ctx, &store.TaskStateSetParams{Scope: scope("t", -1), Key: "k", Value: json.RawMessage(`{bad`), Now: f.now})
	wantErr(t, err, core.ErrInvalid, "set invalid JSON")
}

// SPEC TS-2, TS-6: delete is a no-op when absent; clear takes one map index,
// or every map index of the task, and nothing of other tasks.
func testTaskStateDeleteClearList(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	f.run("etl", "r2")
	for _, sc := range []store.TaskStateScope{scope("m", 0), scope("m", 1), scope("t", -1)} {
		f.setState(sc, "a", `1`, nil, false)
		f.setState(sc, "b", `2`, nil, false)
	}
	f.setState(store.TaskStateScope{DagID: "etl", RunID: "r2", TaskID: "m", MapIndex: 0}, "a", `1`, nil, false)

	mi := 1
	got, err := f.st.TaskStateList(f.ctx, &store.TaskStateListParams{DagID: "etl", RunID: "r1", TaskID: "m", MapIndex: &mi})
	must(t, err, "list one map index")
	if len(got) != 2 || got[0].Key != "a" || got[1].Key != "b" || got[0].MapIndex != 1 || string(got[1].Value) != "2" {
		t.Errorf("list m[1] = %+v", got)
	}

	n, err := f.st.TaskStateDelete(f.ctx, &store.TaskStateDeleteParams{Scope: scope("m", 0), Key: "absent"})
	must(t, err, "delete absent key")
	if n != 0 {
		t.Errorf("deleting an absent key removed %d rows", n)
	}
	n, err = f.st.TaskStateDelete(f.ctx, &store.TaskStateDeleteParams{Scope: scope("m", 0), Key: "a"})
	must(t, err, "delete a")
	if n != 1 {
		t.Errorf("delete removed %d rows, want 1", n)
	}
	n, err = f.st.TaskStateDelete(f.ctx, &store.TaskStateDeleteParams{Scope: scope("m", 1)})
	must(t, err, "clear m[1]")
	if want := []string{"r1/m[0]/b", "r1/t[-1]/a", "r1/t[-1]/b", "r2/m[0]/a"}; n != 2 || !cmp.Equal(f.stateKeys(), want) {
		t.Errorf("after clear of m[1]: removed %d, keys %v, want %v", n, f.stateKeys(), want)
	}
	n, err = f.st.TaskStateDelete(f.ctx, &store.TaskStateDeleteParams{Scope: scope("m", 0), AllMapIndices: true})
	must(t, err, "clear every map index of m")
	if n != 1 || !cmp.Equal(f.stateKeys(), []string{"r1/t[-1]/a", "r1/t[-1]/b", "r2/m[0]/a"}) {
		t.Errorf("after clear of every map index of m in r1: removed %d, keys %v (r2 and t must stay)", n, f.stateKeys())
	}
}

// SPEC TS-4: with ClearTaskState a success deletes the instance's state in
// the same transaction; other outcomes, and a refused finish, keep it.
func testTaskStateClearOnSuccess(t *testing.T, f *fixture) {
	a, b := newTI("a", core.TIRunning), newTI("b", core.TIRunning)
	f.run("etl", "r1", a, b)
	f.setState(scope("a", -1), "k", `1`, nil, false)
	f.setState(scope("b", -1), "k", `1`, nil, false)

	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TIFailed, Now: f.now,
		ClearTaskState: true}), "finish b failed")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now,
		ClearTaskState: true}), "finish a success")
	if got := f.stateKeys(); !cmp.Equal(got, []string{"r1/b[-1]/k"}) {
		t.Fatalf("after a succeeded with clear_on_success: keys %v, want only b's", got)
	}
	// A finish refused (b is no longer running) rolls the clear back.
	err := f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TISuccess, Now: f.now,
		ClearTaskState: true})
	wantErr(t, err, core.ErrConflict, "finish a finished try")
	if got := f.stateKeys(); !cmp.Equal(got, []string{"r1/b[-1]/k"}) {
		t.Errorf("a refused finish deleted task state: keys %v", got)
	}
}

// SPEC GC-1: cleanup deletes rows whose non-null expires_at is past, in
// batches; rows without expiry and never-expire rows stay.
func testTaskStateExpiry(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	past, future := f.at(-time.Minute), f.at(time.Hour)
	for i := range 5 {
		f.setState(scope("t", i), "old", `1`, &past, false)
	}
	f.setState(scope("t", -1), "fresh", `1`, &future, false)
	f.setState(scope("t", -1), "keep", `1`, nil, false)
	f.setState(scope("t", -1), "forever", `1`, nil, true)

	exp, err := f.st.TaskStateExpired(f.ctx, f.now, 0)
	must(t, err, "list expired")
	if len(exp) != 5 || exp[0].MapIndex != 0 || exp[4].MapIndex != 4 || exp[0].Key != "old" {
		t.Fatalf("expired = %+v, want the 5 'old' rows by map index", exp)
	}
	if exp, _ := f.st.TaskStateExpired(f.ctx, f.now, 2); len(exp) != 2 {
		t.Errorf("expired with limit 2 = %d rows", len(exp))
	}
	n, err := f.st.TaskStateDeleteExpired(f.ctx, f.now, 2)
	must(t, err, "delete a batch")
	if n != 2 {
		t.Errorf("first batch deleted %d, want 2", n)
	}
	n, err = f.st.TaskStateDeleteExpired(f.ctx, f.now, 0)
	must(t, err, "delete the rest in one statement")
	if n != 3 {
		t.Errorf("one-statement delete removed %d, want 3", n)
	}
	if got := f.stateKeys(); !cmp.Equal(got, []string{"r1/t[-1]/forever", "r1/t[-1]/fresh", "r1/t[-1]/keep"}) {
		t.Errorf("after cleanup: %v, want forever, fresh and keep", got)
	}
	// Far in the future only the row with an expiry goes.
	n, err = f.st.TaskStateDeleteExpired(f.ctx, f.at(1000*time.Hour), 0)
	must(t, err, "delete later")
	if n != 1 || !cmp.Equal(f.stateKeys(), []string{"r1/t[-1]/forever", "r1/t[-1]/keep"}) {
		t.Errorf("later cleanup removed %d, left %v", n, f.stateKeys())
	}
}

// SPEC SEC-3: TaskStateTry reads a try's scope, try number and state as
// they are now (a finished try reads as finished at once) and ErrNotFound
// for an id that is not a current try.
func testTaskStateTry(t *testing.T, f *fixture) {
	a := newTI("a", core.TIRunning)
	f.run("etl", "r1", a)
	got, err := f.st.TaskStateTry(f.ctx, a.ID)
	must(t, err, "try of a")
	ti, err := f.st.TaskInstanceGet(f.ctx, a.ID)
	must(t, err, "get a")
	want := &store.TaskStateTry{Scope: scope("a", -1), TryNumber: ti.TryNumber, State: core.TIRunning}
	if !cmp.Equal(got, want) {
		t.Fatalf("TaskStateTry = %+v, want %+v", got, want)
	}
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now}), "finish a")
	got, err = f.st.TaskStateTry(f.ctx, a.ID)
	must(t, err, "try of a after it finished")
	if got.State != core.TISuccess {
		t.Fatalf("after success TaskStateTry state = %s, want success", got.State)
	}
	_, err = f.st.TaskStateTry(f.ctx, uuid.NewString())
	wantErr(t, err, core.ErrNotFound, "try of an unknown id")
}
