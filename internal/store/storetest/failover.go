package storetest

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testFailedOverTry: a try failed over for missed heartbeats (running →
// up_for_retry) is its worker's again on a late heartbeat (back to running,
// its retry time cleared) or ends by its late report, until the scheduler
// begins its retry; a retry conditioned on up_for_retry leaves a taken-back
// try alone, and once the retry began the old try is gone.
func testFailedOverTry(t *testing.T, f *fixture) {
	a, b := newTI("a", core.TIQueued), newTI("b", core.TIQueued)
	f.run("etl", "r1", a, b)
	claimed, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 2, Now: f.now})
	must(t, err, "claim")
	if len(claimed) != 2 {
		t.Fatalf("claimed %d, want 2", len(claimed))
	}
	retryAt := f.at(time.Hour)
	failOver := func(id string) {
		t.Helper()
		_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w1", Now: f.now})
		must(t, err, "start")
		must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: id, State: core.TIUpForRetry,
			Now: f.at(time.Minute), NextRetryAt: &retryAt, FailedOver: true}), "fail over")
	}
	failOver(a.ID)
	failOver(b.ID)

	// A late heartbeat takes a back.
	wantErr(t, f.st.TaskInstanceHeartbeat(f.ctx, a.ID, f.at(2*time.Minute)), core.ErrConflict, "plain heartbeat of a failed-over try")
	must(t, f.st.TaskInstanceTakeBack(f.ctx, a.ID, f.at(2*time.Minute)), "take back")
	got := f.get(a.ID)
	if got.State != core.TIRunning || got.NextRetryAt != nil || got.EndDate != nil ||
		got.LastHeartbeat == nil || !got.LastHeartbeat.Equal(f.at(2*time.Minute)) {
		t.Errorf("taken back = state %s next_retry_at %v end %v heartbeat %v, want running, no retry time, no end, heartbeat now+2m",
			got.State, got.NextRetryAt, got.EndDate, got.LastHeartbeat)
	}
	wantErr(t, f.st.TaskInstanceTakeBack(f.ctx, a.ID, f.now), core.ErrConflict, "take back a running try")
	wantErr(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: a.ID, NewID: "11111111-0000-4000-8000-000000000001",
		To: core.TIScheduled, Now: f.now, From: core.TIUpForRetry}), core.ErrConflict, "retry a taken-back try")
	if got := f.get(a.ID); got.State != core.TIRunning || got.TryNumber != 1 {
		t.Errorf("after a refused retry a is %s try %d, want running try 1", got.State, got.TryNumber)
	}
	if h, err := f.st.TaskInstanceHistory(f.ctx, "etl", "r1", "a", core.NoMapIndex); err != nil || len(h) != 0 {
		t.Errorf("history of a after a refused retry = %d tries, %v; want none", len(h), err)
	}

	// A late report ends b, only from up_for_retry.
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TISuccess, Now: f.now}),
		core.ErrConflict, "finish a failed-over try as if running")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TISuccess,
		From: core.TIUpForRetry, Now: f.at(3 * time.Minute)}), "late report")
	if got := f.get(b.ID); got.State != core.TISuccess || got.NextRetryAt != nil {
		t.Errorf("late report = %s next_retry_at %v, want success without a retry time", got.State, got.NextRetryAt)
	}

	// A try its worker reported failed is not failed over: neither a
	// heartbeat nor a report takes it.
	c := newTI("c", core.TIQueued)
	f.run("etl", "r2", c)
	_, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 1, Now: f.now})
	must(t, err, "claim c")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: c.ID, WorkerID: "w1", Now: f.now})
	must(t, err, "start c")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: c.ID, State: core.TIUpForRetry,
		Now: f.at(time.Minute), NextRetryAt: &retryAt}), "report c failed")
	wantErr(t, f.st.TaskInstanceTakeBack(f.ctx, c.ID, f.at(2*time.Minute)), core.ErrConflict, "take back a reported failure")
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: c.ID, State: core.TISuccess,
		From: core.TIUpForRetry, Now: f.at(2 * time.Minute)}), core.ErrConflict, "success after a reported failure")
	if got := f.get(c.ID); got.State != core.TIUpForRetry {
		t.Errorf("c = %s after refused late writes, want up_for_retry", got.State)
	}

	// Once the retry began, the old try is gone: its late heartbeat finds nothing.
	failOverAgain := a.ID
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: failOverAgain, State: core.TIUpForRetry,
		Now: f.at(4 * time.Minute), NextRetryAt: &retryAt, FailedOver: true}), "fail over again")
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: a.ID, NewID: "11111111-0000-4000-8000-000000000002",
		To: core.TIScheduled, Now: f.at(5 * time.Minute), From: core.TIUpForRetry}), "retry")
	wantErr(t, f.st.TaskInstanceTakeBack(f.ctx, a.ID, f.at(6*time.Minute)), core.ErrNotFound, "take back a replaced try")
}

// testFailoverSeesTheHeartbeat: the dead-worker check's end of a try holds
// only while the try's last heartbeat is the one the check read; one that
// came meanwhile (or a first one, for a try seen without any) makes it
// ErrConflict, the try running on.
func testFailoverSeesTheHeartbeat(t *testing.T, f *fixture) {
	a, b, c := newTI("a", core.TIQueued), newTI("b", core.TIQueued), newTI("c", core.TIQueued)
	f.run("etl", "r1", a, b, c)
	_, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 3, Now: f.now})
	must(t, err, "claim")
	for _, id := range []string{a.ID, b.ID, c.ID} {
		_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w1", Now: f.now})
		must(t, err, "start")
	}
	beat := f.at(time.Minute)
	must(t, f.st.TaskInstanceHeartbeat(f.ctx, a.ID, beat), "beat a")
	must(t, f.st.TaskInstanceHeartbeat(f.ctx, b.ID, beat), "beat b")
	retryAt := f.at(time.Hour)
	failOver := func(id string, seen *time.Time) error {
		return f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: id, State: core.TIUpForRetry, Now: f.at(10 * time.Minute),
			NextRetryAt: &retryAt, FailedOver: true, SeenHeartbeat: &store.HeartbeatSeen{At: seen}})
	}
	must(t, failOver(a.ID, &beat), "fail over a, its heartbeat the one seen")
	must(t, f.st.TaskInstanceHeartbeat(f.ctx, b.ID, f.at(9*time.Minute)), "b beats again")
	wantErr(t, failOver(b.ID, &beat), core.ErrConflict, "fail over b, which beat after the check read it")
	must(t, f.st.TaskInstanceHeartbeat(f.ctx, c.ID, f.at(9*time.Minute)), "c beats first")
	wantErr(t, failOver(c.ID, nil), core.ErrConflict, "fail over c, seen without a heartbeat, which beat since")
	for id, want := range map[string]core.TIState{a.ID: core.TIUpForRetry, b.ID: core.TIRunning, c.ID: core.TIRunning} {
		if got := f.get(id).State; got != want {
			t.Errorf("%s: %s, want %s", f.get(id).TaskID, got, want)
		}
	}
}

// testRefundedTry: a try ended up_for_retry with RefundTry (its worker
// stopped it as it shut down) gives its instance one try more, which its
// retry keeps; without it, or with another end, max_tries stays.
func testRefundedTry(t *testing.T, f *fixture) {
	a, b := newTI("a", core.TIQueued), newTI("b", core.TIQueued)
	f.run("etl", "r1", a, b)
	_, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 2, Now: f.now})
	must(t, err, "claim")
	for _, id := range []string{a.ID, b.ID} {
		_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w1", Now: f.now})
		must(t, err, "start")
	}
	before := f.get(a.ID).MaxTries
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TIUpForRetry,
		Now: f.at(time.Minute), NextRetryAt: &f.now, RefundTry: true}), "interrupt a")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TIFailed,
		Now: f.at(time.Minute), RefundTry: true}), "fail b")
	if got := f.get(a.ID); got.State != core.TIUpForRetry || got.MaxTries != before+1 || got.Interruptions != 1 {
		t.Errorf("a = %s with max_tries %d and %d interruptions, want up_for_retry with %d and 1", got.State, got.MaxTries, got.Interruptions, before+1)
	}
	if got := f.get(b.ID); got.State != core.TIFailed || got.MaxTries != before {
		t.Errorf("b = %s with max_tries %d, want failed with %d (a refund goes with up_for_retry only)", got.State, got.MaxTries, before)
	}
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: a.ID, NewID: "11111111-0000-4000-8000-0000000000a2",
		To: core.TIScheduled, Now: f.at(2 * time.Minute), From: core.TIUpForRetry}), "retry a")
	if got := f.get("11111111-0000-4000-8000-0000000000a2"); got.TryNumber != 2 || got.MaxTries != before+1 || got.Interruptions != 1 {
		t.Errorf("a's retry = try %d of %d (%d interruptions), want try 2 of %d (1)", got.TryNumber, got.MaxTries, got.Interruptions, before+1)
	}
}
