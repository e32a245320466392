package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// deferTI defers the try id on a timedelta trigger and returns the trigger id.
func (f *fixture) deferTI(id string, from core.TIState, timeout *time.Time) int64 {
	f.t.Helper()
	tid, err := f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: id, From: []core.TIState{from},
		Trigger:    core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1m"}`)},
		NextMethod: "done", NextKwargs: json.RawMessage(`{"k":1}`), Timeout: timeout, Now: f.at(time.Second)})
	must(f.t, err, "defer "+id)
	return tid
}

func testDeferResume(t *testing.T, f *fixture) {
	running, idle := newTI("wait", core.TIQueued), newTI("idle", core.TIQueued)
	f.run("etl", "r1", running, idle)
	claimed, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 1, Now: f.now})
	must(t, err, "claim")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: claimed[0].ID, WorkerID: "w1", Now: f.now})
	must(t, err, "start")
	id := claimed[0].ID
	other := running.ID
	if id == running.ID {
		other = idle.ID
	}

	// Only the allowed state defers; a refused deferral creates no trigger.
	_, err = f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: other, From: []core.TIState{core.TIRunning},
		Trigger: core.TriggerSpec{Type: "timedelta"}, Now: f.now})
	wantErr(t, err, core.ErrConflict, "defer a queued try as if running")
	if n, err := f.st.TriggerCount(f.ctx, &store.TriggerListParams{}); err != nil || n != 0 {
		t.Fatalf("triggers after a refused deferral = %d, %v; want 0", n, err)
	}

	timeout := f.at(time.Hour)
	tid := f.deferTI(id, core.TIRunning, &timeout)
	ti := f.get(id)
	if ti.State != core.TIDeferred || ti.TriggerID == nil || *ti.TriggerID != tid || ti.WorkerID != "" ||
		ti.NextMethod != "done" || string(ti.NextKwargs) != `{"k":1}` || !sameTime(ti.TriggerTimeout, &timeout) ||
		ti.TryNumber != 1 || ti.StartDate == nil {
		t.Fatalf("deferred try = %+v, want deferred on trigger %d, no worker, next method done, timeout %s, try 1 still started",
			ti, tid, timeout)
	}
	tr, err := f.st.TriggerGet(f.ctx, tid)
	must(t, err, "get trigger")
	if tr.Type != "timedelta" || string(tr.Kwargs) != `{"delta":"1m"}` || tr.TriggererID != "" || !tr.CreatedAt.Equal(f.at(time.Second)) {
		t.Errorf("trigger = %+v, want an unassigned timedelta created at defer time", tr)
	}
	waiting, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{TriggerID: tid})
	if err != nil || len(waiting) != 1 || waiting[0].ID != id {
		t.Fatalf("tries waiting on trigger %d = %v, %v; want [%s]", tid, taskIDs(waiting), err, id)
	}
	moved, err := f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{TriggerID: tid,
		Event: json.RawMessage(`{"moment":"x"}`), Now: f.at(2 * time.Second)})
	must(t, err, "resume")
	if len(moved) != 1 || moved[0] != id {
		t.Fatalf("resumed %v, want [%s]", moved, id)
	}
	ti = f.get(id)
	if ti.State != core.TIScheduled || ti.TriggerID != nil || ti.TriggerTimeout != nil || ti.NextMethod != "done" ||
		string(ti.NextEvent) != `{"moment":"x"}` || string(ti.NextKwargs) != `{"k":1}` || ti.TryNumber != 1 {
		t.Fatalf("resumed try = %+v, want scheduled, same try, event stored, next method kept", ti)
	}
	// A second event resumes nothing: each deferral resumes once.
	moved, err = f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{TriggerID: tid, Event: json.RawMessage(`2`), Now: f.now})
	if err != nil || len(moved) != 0 {
		t.Errorf("second resume = %v, %v; want nothing moved", moved, err)
	}
	n, err := f.st.TriggerDeleteUnused(f.ctx, tid)
	if err != nil || n != 1 {
		t.Errorf("delete unused trigger = %d, %v; want 1", n, err)
	}
	_, err = f.st.TriggerGet(f.ctx, tid)
	wantErr(t, err, core.ErrNotFound, "get deleted trigger")

	// The resumed step runs on a worker and keeps the try's start date.
	started := *ti.StartDate
	_, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{id}, From: []core.TIState{core.TIScheduled},
		To: core.TIQueued, Now: f.at(3 * time.Second)})
	must(t, err, "queue the resumed try")
	_, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w2", Limit: 5, Now: f.at(3 * time.Second)})
	must(t, err, "claim the resumed try")
	resumed, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w2", Now: f.at(4 * time.Second)})
	must(t, err, "start the resumed try")
	if resumed.TryNumber != 1 || resumed.StartDate == nil || !resumed.StartDate.Equal(started) {
		t.Errorf("resumed try started %v (try %d), want the first step's start %v, try 1", resumed.StartDate, resumed.TryNumber, started)
	}
}

func testDeferTimeoutFailAndNewTry(t *testing.T, f *fixture) {
	a, b, c, d := newTI("a", core.TINone), newTI("b", core.TINone), newTI("c", core.TINone), newTI("d", core.TINone)
	f.run("etl", "r1", a, b, c, d)
	// A task that cannot start from its trigger fails through a worker
	// step: none → scheduled into __fail__ (only with a failure).
	_, err := f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{IDs: []string{d.ID}, FromNone: true, Now: f.now})
	wantErr(t, err, core.ErrInvalid, "move a none-state try without a failure")
	moved, err := f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{IDs: []string{d.ID}, FromNone: true,
		Fail: "cannot start", Now: f.now})
	if err != nil || len(moved) != 1 || f.get(d.ID).State != core.TIScheduled || f.get(d.ID).NextMethod != core.NextMethodFail {
		t.Fatalf("fail a none-state try = %v, %v; want it scheduled into __fail__", moved, err)
	}
	// A task that starts from its trigger defers from none.
	early, late := f.at(time.Minute), f.at(time.Hour)
	tidA := f.deferTI(a.ID, core.TINone, &early)
	f.deferTI(b.ID, core.TINone, &late)
	tidC := f.deferTI(c.ID, core.TINone, nil)
	if ti := f.get(a.ID); ti.StartDate == nil || !ti.StartDate.Equal(f.at(time.Second)) {
		t.Errorf("a try that starts in the triggerer has start_date %v, want the deferral time", ti.StartDate)
	}

	due, err := f.st.TaskInstanceDeferredTimedOut(f.ctx, f.at(2*time.Minute), 10)
	must(t, err, "timed out")
	if len(due) != 1 || due[0].ID != a.ID {
		t.Fatalf("timed out = %v, want only a", taskIDs(due))
	}
	moved, err = f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{IDs: []string{a.ID},
		Fail: "trigger timeout of 1m0s passed", Now: f.at(2 * time.Minute)})
	if err != nil || len(moved) != 1 {
		t.Fatalf("fail a = %v, %v", moved, err)
	}
	ti := f.get(a.ID)
	if ti.State != core.TIScheduled || ti.NextMethod != core.NextMethodFail ||
		string(ti.NextKwargs) != `{"error":"trigger timeout of 1m0s passed"}` || ti.NextEvent != nil {
		t.Errorf("failed deferral = %+v, want scheduled with __fail__ and the message", ti)
	}
	// Deleting unused triggers keeps those a try still waits on.
	n, err := f.st.TriggerDeleteUnused(f.ctx)
	if err != nil || n != 1 {
		t.Errorf("delete unused = %d, %v; want 1 (a's)", n, err)
	}
	if _, err := f.st.TriggerGet(f.ctx, tidA); err == nil {
		t.Errorf("a's trigger survived")
	}
	// Clearing a deferred try (a new try) forgets its deferral.
	c2 := uuid.NewString()
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: c.ID, NewID: c2, To: core.TINone, Now: f.at(time.Hour)}), "new try")
	ti = f.get(c2)
	if ti.TriggerID != nil || ti.NextMethod != "" || ti.NextKwargs != nil || ti.State != core.TINone {
		t.Errorf("new try after a deferral = %+v, want no trigger and no next method", ti)
	}
	hist, err := f.st.TaskInstanceHistory(f.ctx, "etl", "r1", "c", core.NoMapIndex)
	must(t, err, "history")
	if len(hist) != 1 || hist[0].State != core.TIFailed || hist[0].TriggerID == nil || *hist[0].TriggerID != tidC {
		t.Errorf("history of c = %+v, want the deferred try recorded as failed with its trigger", hist)
	}
}

func testTriggerClaimHoldFailover(t *testing.T, f *fixture) {
	var ids []store.NewTaskInstance
	for i := range 5 {
		ids = append(ids, newTI(fmt.Sprintf("t%d", i), core.TINone))
	}
	f.run("etl", "r1", ids...)
	var tids []int64
	for _, ti := range ids {
		tids = append(tids, f.deferTI(ti.ID, core.TINone, nil))
	}
	beat := func(id string, at time.Time) {
		must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: id, Role: "triggerer", Hostname: "h", PID: 1, StartedAt: f.now, Heartbeat: at}), "heartbeat "+id)
	}
	beat("t1", f.now)
	beat("t2", f.now)
	alive := f.at(-10 * time.Second)
	claimed, err := f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "t1", AliveSince: alive, Limit: 3})
	if n := len(claimed); err != nil || n != 3 || claimed[0].TriggererID != "t1" || claimed[0].Type != "timedelta" {
		t.Fatalf("t1 claims %+v, %v; want 3 (its limit), owned by t1", claimed, err)
	}
	claimed, err = f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "t2", AliveSince: alive, Limit: 10})
	if n := len(claimed); err != nil || n != 2 {
		t.Fatalf("t2 claims %d, %v; want the 2 left (t1 is alive)", len(claimed), err)
	}
	mine, err := f.st.TriggerList(f.ctx, &store.TriggerListParams{TriggererID: "t1"})
	must(t, err, "list t1's")
	if len(mine) != 3 {
		t.Fatalf("t1 owns %d triggers, want 3", len(mine))
	}
	must(t, f.st.TriggerHold(f.ctx, mine[0].ID, "t1"), "t1 holds its trigger")
	wantErr(t, f.st.TriggerHold(f.ctx, mine[0].ID, "t2"), core.ErrConflict, "t2 holds t1's trigger")

	// t1 stops heartbeating: once its beat is older than AliveSince, t2
	// takes its triggers, and t1's hold is refused (the fence).
	beat("t2", f.at(time.Minute))
	claimed, err = f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "t2", AliveSince: f.at(30 * time.Second), Limit: 10})
	if err != nil || len(claimed) != 3 {
		t.Fatalf("t2 claims %d of dead t1's triggers, %v; want 3", len(claimed), err)
	}
	wantErr(t, f.st.TriggerHold(f.ctx, mine[0].ID, "t1"), core.ErrConflict, "dead t1 holds a trigger t2 took")
	if c, err := f.st.TriggerCount(f.ctx, &store.TriggerListParams{TriggererID: "t2"}); err != nil || c != len(tids) {
		t.Errorf("t2 owns %d, %v; want %d", c, err, len(tids))
	}
}

func testTriggerClaimExclusiveConcurrent(t *testing.T, f *fixture) {
	const total, claimers = 60, 4
	seed := make([]store.NewTaskInstance, total)
	for i := range seed {
		seed[i] = newTI(fmt.Sprintf("t%03d", i), core.TINone)
	}
	f.run("etl", "r1", seed...)
	for _, ti := range seed {
		f.deferTI(ti.ID, core.TINone, nil)
	}
	var wg sync.WaitGroup
	counts := make([]int, claimers)
	errs := make(chan error, claimers)
	for c := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("trg%d", c)
			if err := f.st.JobHeartbeat(f.ctx, &core.Job{ID: id, Role: "triggerer", Hostname: "h", StartedAt: f.now, Heartbeat: f.now}); err != nil {
				errs <- err
				return
			}
			for {
				got, err := f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: id, AliveSince: f.at(-time.Minute), Limit: 3})
				n := len(got)
				if err != nil {
					errs <- err
					return
				}
				if n == 0 {
					return
				}
				counts[c] += n
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent claim: %v", err)
	}
	sum := 0
	for c, n := range counts {
		owned, err := f.st.TriggerCount(f.ctx, &store.TriggerListParams{TriggererID: fmt.Sprintf("trg%d", c)})
		must(t, err, "count")
		if owned != n {
			t.Errorf("claimer %d counted %d claims but owns %d: a trigger was taken twice", c, n, owned)
		}
		sum += n
	}
	if sum != total {
		t.Errorf("claims total %d, want %d (each trigger once)", sum, total)
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
