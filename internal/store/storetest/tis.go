package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testTaskInstanceGetList(t *testing.T, f *fixture) {
	a, b := newTI("a", core.TINone), newTI("b", core.TIQueued)
	b.Queue, b.Pool, b.PoolSlots, b.PriorityWeight, b.MaxTries = "gpu", "p1", 3, 7, 4
	run := f.run("etl", "r1", a, b)
	m0, m1 := newTI("m", core.TINone), newTI("m", core.TINone)
	m0.MapIndex, m1.MapIndex = 0, 1
	f.run("etl", "r2", newTI("a", core.TINone), m0, m1)

	got := f.get(b.ID)
	if got.Queue != "gpu" || got.Pool != "p1" || got.PoolSlots != 3 || got.PriorityWeight != 7 ||
		got.MaxTries != 4 || got.State != core.TIQueued || got.QueuedAt == nil || !got.QueuedAt.Equal(f.now) {
		t.Errorf("task instance b = %+v, want the seeded queue/pool/slots/priority and queued at now", got)
	}
	byKey, err := f.st.TaskInstanceGetByKey(f.ctx, "etl", "r1", "b", core.NoMapIndex)
	must(t, err, "get by key")
	if byKey.ID != b.ID {
		t.Errorf("by key: id %s, want %s", byKey.ID, b.ID)
	}
	_, err = f.st.TaskInstanceGetByKey(f.ctx, "etl", "r1", "b", 0)
	wantErr(t, err, core.ErrNotFound, "get by key with a wrong map index")
	_, err = f.st.TaskInstanceGet(f.ctx, uuid.NewString())
	wantErr(t, err, core.ErrNotFound, "get unknown id")

	for _, tc := range []struct {
		name string
		p    store.TaskInstanceListParams
		want int
	}{
		{"all", store.TaskInstanceListParams{}, 5},
		{"by run id", store.TaskInstanceListParams{DagRunID: run.ID}, 2},
		{"by dag and run", store.TaskInstanceListParams{DagID: "etl", RunID: "r2"}, 3},
		{"by map index", store.TaskInstanceListParams{MapIndex: ptr(1)}, 1},
		{"unmapped", store.TaskInstanceListParams{MapIndex: ptr(core.NoMapIndex)}, 3},
		{"mapped", store.TaskInstanceListParams{Mapped: true}, 2},
		{"by task", store.TaskInstanceListParams{TaskID: "a"}, 2},
		{"by state", store.TaskInstanceListParams{States: []core.TIState{core.TIQueued}}, 1},
		{"by state none", store.TaskInstanceListParams{States: []core.TIState{core.TINone}}, 4},
		{"limited", store.TaskInstanceListParams{Page: store.Page{Limit: 2}}, 2},
		{"offset", store.TaskInstanceListParams{Page: store.Page{Offset: 2}}, 3},
		{"by tasks", store.TaskInstanceListParams{DagRunID: run.ID, TaskIDs: []string{"a", "b", "x"}}, 2},
		{"by one of tasks", store.TaskInstanceListParams{TaskIDs: []string{"b"}}, 1},
		{"by dags", store.TaskInstanceListParams{DagIDs: []string{"etl", "other"}}, 5},
		{"by another dag", store.TaskInstanceListParams{DagIDs: []string{"other"}}, 0},
		{"by run ids", store.TaskInstanceListParams{RunIDs: []string{"r2", "r9"}}, 3},
		{"updated since creation", store.TaskInstanceListParams{UpdatedSince: f.now}, 5},
		{"unordered, by state", store.TaskInstanceListParams{DagRunID: run.ID, States: []core.TIState{core.TINone}, Unordered: true}, 1},
		{"except a pool", store.TaskInstanceListParams{ExceptPools: []string{"p1", "p2"}}, 4},
		{"except the dag", store.TaskInstanceListParams{ExceptDagIDs: []string{"etl"}}, 0},
		{"except another dag", store.TaskInstanceListParams{ExceptDagIDs: []string{"other"}, ExceptPools: []string{"p2"}}, 5},
		{"updated since later", store.TaskInstanceListParams{UpdatedSince: f.at(time.Microsecond)}, 0},
	} {
		tis, err := f.st.TaskInstanceList(f.ctx, &tc.p)
		must(t, err, tc.name)
		if len(tis) != tc.want {
			t.Errorf("%s: %d task instances, want %d", tc.name, len(tis), tc.want)
		}
	}
}

func testTaskInstanceSetState(t *testing.T, f *fixture) {
	a, b, c := newTI("a", core.TINone), newTI("b", core.TIScheduled), newTI("c", core.TISuccess)
	f.run("etl", "r1", a, b, c)
	moved, err := f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{
		IDs: []string{a.ID, b.ID, c.ID}, From: []core.TIState{core.TINone, core.TIScheduled},
		To: core.TIQueued, Now: f.at(time.Second)})
	must(t, err, "queue")
	if diff := sortedDiff([]string{a.ID, b.ID}, moved); diff != "" {
		t.Errorf("moved ids (-want +got), the success one must stay:\n%s", diff)
	}
	if got := f.get(a.ID); got.State != core.TIQueued || got.QueuedAt == nil || !got.QueuedAt.Equal(f.at(time.Second)) {
		t.Errorf("a = state %s queued_at %v, want queued at now+1s", got.State, got.QueuedAt)
	}
	if got := f.get(c.ID); got.State != core.TISuccess {
		t.Errorf("c = %s, want success unchanged", got.State)
	}
	retry := f.at(5 * time.Minute)
	moved, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{
		IDs: []string{a.ID}, To: core.TIUpForRetry, Now: f.at(time.Minute), NextRetryAt: &retry})
	must(t, err, "up for retry")
	if len(moved) != 1 {
		t.Fatalf("moved %v, want [a] (empty From allows any state)", moved)
	}
	got := f.get(a.ID)
	if got.State != core.TIUpForRetry || got.NextRetryAt == nil || !got.NextRetryAt.Equal(retry) ||
		got.EndDate == nil || !got.EndDate.Equal(f.at(time.Minute)) {
		t.Errorf("a = state %s next_retry %v end %v, want up_for_retry with retry time and end date", got.State, got.NextRetryAt, got.EndDate)
	}
	moved, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{To: core.TIFailed, Now: f.now})
	must(t, err, "no ids")
	if len(moved) != 0 {
		t.Errorf("no ids moved %v", moved)
	}
	// Unread: no ids back; in a transaction the update may wait for the
	// next statement, which sees it, as the commit keeps it.
	must(t, f.st.WithTx(f.ctx, func(tx store.Store) error {
		moved, err := tx.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{b.ID, c.ID},
			From: []core.TIState{core.TIQueued}, To: core.TIScheduled, Now: f.at(2 * time.Minute), Unread: true})
		if err != nil || moved != nil {
			return fmt.Errorf("unread update: ids %v, want none; error: %w", moved, err)
		}
		got, err := tx.TaskInstanceGet(f.ctx, b.ID)
		if err == nil && got.State != core.TIScheduled {
			err = fmt.Errorf("b = %s in the transaction after the unread update, want scheduled", got.State)
		}
		return err
	}), "unread update in a transaction")
	if got := f.get(b.ID); got.State != core.TIScheduled {
		t.Errorf("b = %s after commit, want scheduled", got.State)
	}
	if got := f.get(c.ID); got.State != core.TISuccess {
		t.Errorf("c = %s, want success: the unread update's From left it out", got.State)
	}
}

func testTaskInstanceExpand(t *testing.T, f *fixture) {
	ph := newTI("mapped", core.TINone)
	empty := newTI("empty", core.TINone)
	run := f.run("etl", "r1", ph, empty, newTI("other", core.TINone))
	var kids []store.NewTaskInstance
	for i := range 3 {
		k := newTI("mapped", core.TINone)
		k.MapIndex = i
		k.MapArgs = json.RawMessage(`{"x":` + string(rune('0'+i)) + `}`)
		kids = append(kids, k)
	}
	must(t, f.st.TaskInstanceExpand(f.ctx, &store.TaskInstanceExpandParams{DagRunID: run.ID, TaskID: "mapped",
		Instances: kids, Now: f.now}), "expand")
	tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskID: "mapped"})
	must(t, err, "list mapped")
	if len(tis) != 3 {
		t.Fatalf("%d mapped instances, want 3 (placeholder replaced)", len(tis))
	}
	for i, ti := range tis {
		if ti.MapIndex != i || string(ti.MapArgs) != string(kids[i].MapArgs) || ti.DagID != "etl" || ti.RunID != "r1" {
			t.Errorf("instance %d = map index %d args %s, want %d %s", i, ti.MapIndex, ti.MapArgs, i, kids[i].MapArgs)
		}
	}
	// A try's end reads a mapped successor's instances with their run
	// (whose conf only the first row of each task carries).
	read, err := f.st.DagRunGetPausedWithTasks(f.ctx, run.ID, []string{"other", "mapped"})()
	must(t, err, "read the mapped instances with their run")
	got, withRun := read.Run, read.Tasks
	all, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskIDs: []string{"mapped", "other"}})
	must(t, err, "list mapped and other")
	if diff := cmp.Diff(all, withRun); diff != "" || got == nil || got.ID != run.ID || got.RunID != "r1" {
		t.Errorf("with their run %+v (-listed +read with it):\n%s", got, diff)
	}
	_, err = f.st.TaskInstanceGet(f.ctx, ph.ID)
	wantErr(t, err, core.ErrNotFound, "placeholder after expansion")
	err = f.st.TaskInstanceExpand(f.ctx, &store.TaskInstanceExpandParams{DagRunID: run.ID, TaskID: "mapped",
		Instances: kids, Now: f.now})
	wantErr(t, err, core.ErrConflict, "expand twice")

	must(t, f.st.TaskInstanceExpand(f.ctx, &store.TaskInstanceExpandParams{DagRunID: run.ID, TaskID: "empty", Now: f.now}),
		"expand to nothing")
	if got := f.get(empty.ID); got.State != core.TISkipped || got.MapIndex != core.NoMapIndex {
		t.Errorf("empty expansion: placeholder = %s[%d], want skipped[-1]", got.State, got.MapIndex)
	}
	err = f.st.TaskInstanceExpand(f.ctx, &store.TaskInstanceExpandParams{DagRunID: run.ID, TaskID: "nope", Now: f.now})
	wantErr(t, err, core.ErrNotFound, "expand unknown task")

	// A failing expansion changes nothing (one transaction).
	dup := []store.NewTaskInstance{newTI("other2", core.TINone), newTI("other2", core.TINone)}
	dup[0].MapIndex, dup[1].MapIndex = 0, 0
	ph2 := newTI("other2", core.TINone)
	run2 := f.run("etl", "r2", ph2)
	err = f.st.TaskInstanceExpand(f.ctx, &store.TaskInstanceExpandParams{DagRunID: run2.ID, TaskID: "other2",
		Instances: dup, Now: f.now})
	wantErr(t, err, core.ErrConflict, "expand with a duplicate map index")
	if got := f.get(ph2.ID); got.MapIndex != core.NoMapIndex {
		t.Errorf("placeholder after failed expansion: %+v", got)
	}
}

func testTaskInstanceNewTry(t *testing.T, f *fixture) {
	ti := newTI("a", core.TIQueued)
	ti.MaxTries = 2
	f.run("etl", "r1", ti)
	claimed, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 1, Now: f.now})
	must(t, err, "claim")
	if len(claimed) != 1 {
		t.Fatalf("claimed %d, want 1", len(claimed))
	}
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: "w1", Hostname: "h", PID: 42, Now: f.now})
	must(t, err, "start")
	retry := f.at(time.Minute)
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: ti.ID, State: core.TIUpForRetry,
		Now: f.at(time.Second), NextRetryAt: &retry}), "fail try 1")

	second := uuid.NewString()
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: ti.ID, NewID: second,
		To: core.TIScheduled, Now: f.at(time.Minute)}), "new try")
	_, err = f.st.TaskInstanceGet(f.ctx, ti.ID)
	wantErr(t, err, core.ErrNotFound, "old try id")
	cur := f.get(second)
	if cur.TryNumber != 2 || cur.MaxTries != 2 || cur.State != core.TIScheduled || cur.WorkerID != "" ||
		cur.Hostname != "" || cur.PID != 0 || cur.StartDate != nil || cur.EndDate != nil || cur.QueuedAt != nil ||
		cur.LastHeartbeat != nil {
		t.Errorf("try 2 = %+v, want try 2 of 2, scheduled, no worker or dates", cur)
	}
	hist, err := f.st.TaskInstanceHistory(f.ctx, "etl", "r1", "a", core.NoMapIndex)
	must(t, err, "history")
	if len(hist) != 1 {
		t.Fatalf("history has %d tries, want 1", len(hist))
	}
	h := hist[0]
	if h.ID != ti.ID || h.TryNumber != 1 || h.State != core.TIFailed || h.WorkerID != "w1" || h.PID != 42 ||
		h.StartDate == nil || h.EndDate == nil {
		t.Errorf("archived try = %+v, want try 1 as it ended (failed: it was up_for_retry; worker w1, dates)", h)
	}

	third := uuid.NewString()
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: second, NewID: third,
		To: core.TINone, ExtraTries: 1, Now: f.at(2 * time.Minute)}), "clear")
	cur = f.get(third)
	if cur.TryNumber != 3 || cur.MaxTries != 3 || cur.State != core.TINone {
		t.Errorf("after clear: try %d of %d state %s, want 3 of 3, none", cur.TryNumber, cur.MaxTries, cur.State)
	}
	hist, err = f.st.TaskInstanceHistory(f.ctx, "etl", "r1", "a", core.NoMapIndex)
	must(t, err, "history")
	if len(hist) != 2 || hist[0].TryNumber != 1 || hist[1].TryNumber != 2 {
		t.Errorf("history = %d tries, want tries 1 and 2 oldest first", len(hist))
	}
	err = f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: uuid.NewString(), NewID: uuid.NewString(),
		To: core.TINone, Now: f.now})
	wantErr(t, err, core.ErrNotFound, "new try of unknown instance")
}

// testTaskInstanceUpdatedSince checks that every change the scheduler must
// see stamps updated_at (its incremental read of a run relies on it): a
// state change, a claim, a start, a finish, a new try and an expansion.
func testTaskInstanceUpdatedSince(t *testing.T, f *fixture) {
	a, other, ph := newTI("a", core.TINone), newTI("other", core.TINone), newTI("m", core.TINone)
	run := f.run("etl", "r1", a, other, ph)
	changed := func(at time.Time, what string, want ...string) {
		t.Helper()
		tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID, UpdatedSince: at})
		must(t, err, what)
		var got, ids []string
		for _, ti := range tis {
			got = append(got, fmt.Sprintf("%s[%d]", ti.TaskID, ti.MapIndex))
			ids = append(ids, ti.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("after %s: changed %v, want %v", what, got, want)
		}
		// The narrow read of the same rows, and the read by their ids.
		states, err := f.st.TaskInstanceStates(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID, UpdatedSince: at})
		must(t, err, what+": states")
		wantStates := map[string]core.TIState{}
		for _, ti := range tis {
			wantStates[ti.ID] = ti.State
		}
		gotStates := map[string]core.TIState{}
		for _, st := range states {
			gotStates[st.ID] = st.State
		}
		if !maps.Equal(gotStates, wantStates) {
			t.Errorf("after %s: states %v, want %v", what, gotStates, wantStates)
		}
		// With a limit, at most that many of the same rows.
		one, err := f.st.TaskInstanceStates(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID, UpdatedSince: at, Page: store.Page{Limit: 1}})
		must(t, err, what+": one state")
		if len(one) != min(len(tis), 1) || (len(one) == 1 && wantStates[one[0].ID] != one[0].State) {
			t.Errorf("after %s: states with limit 1 = %v, want one of %v", what, one, wantStates)
		}
		if len(ids) > 0 {
			byID, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{IDs: ids})
			must(t, err, what+": by id")
			if len(byID) != len(ids) {
				t.Errorf("after %s: %d rows by id, want %d", what, len(byID), len(ids))
			}
		}
	}
	step := func(i int) time.Time { return f.at(time.Duration(i) * time.Second) }
	_, err := f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{
		IDs: []string{a.ID}, To: core.TIQueued, Now: step(1)})
	must(t, err, "queue")
	changed(step(1), "queue", "a[-1]")
	claimed, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{
		WorkerID: "w", Queues: []string{core.DefaultQueue}, Limit: 1, Now: step(2)})
	must(t, err, "claim")
	if len(claimed) != 1 {
		t.Fatalf("claimed %d, want 1", len(claimed))
	}
	changed(step(2), "claim", "a[-1]")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: a.ID, WorkerID: "w", Now: step(3)})
	must(t, err, "start")
	changed(step(3), "start", "a[-1]")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: step(4)}), "finish")
	changed(step(4), "finish", "a[-1]")
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{
		ID: a.ID, NewID: uuid.NewString(), To: core.TINone, Now: step(5)}), "new try")
	changed(step(5), "new try", "a[-1]")
	must(t, f.st.TaskInstanceExpand(f.ctx, &store.TaskInstanceExpandParams{DagRunID: run.ID, TaskID: "m", Now: step(6),
		Instances: []store.NewTaskInstance{{ID: uuid.NewString(), TaskID: "m", MapIndex: 0, MaxTries: 1,
			Queue: core.DefaultQueue, Pool: core.DefaultPool, PoolSlots: 1, State: core.TIScheduled}}}), "expand")
	changed(step(6), "expand", "m[0]")
	changed(step(1), "everything", "a[-1]", "m[0]")
}
