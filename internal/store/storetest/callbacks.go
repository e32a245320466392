package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// callbackOf describes a fired task callback of run r.
func callbackOf(r *core.DagRun, taskID string, ev core.CallbackEvent, idx int) core.Callback {
	return core.Callback{Level: core.CallbackTask, Event: ev, DagID: r.DagID, RunID: r.RunID, DagRunID: r.ID,
		TaskID: taskID, MapIndex: core.NoMapIndex, TryNumber: 1, SpecIndex: idx,
		Spec: core.CallbackSpec{Command: "echo " + taskID}, Outcome: "failed"}
}

func testCallbackQueue(t *testing.T, f *fixture) {
	r := f.run("etl", "r1")
	dagLevel := core.Callback{Level: core.CallbackDag, Event: core.OnFailure, DagID: r.DagID, RunID: r.RunID,
		DagRunID: r.ID, MapIndex: core.NoMapIndex, Spec: core.CallbackSpec{Command: "page"}, Outcome: "failed"}
	fired := []core.Callback{callbackOf(r, "a", core.OnFailure, 0), callbackOf(r, "a", core.OnFailure, 1), dagLevel}
	must(t, f.st.CallbackInsert(f.ctx, fired, f.now), "insert")
	all, total, err := store.List(f.ctx, &store.CallbackListParams{DagRunID: r.ID}, f.st.CallbackList, f.st.CallbackCount)
	must(t, err, "list")
	if total != 3 || len(all) != 3 || all[0].State != core.CallbackQueued || all[2].TaskID != "" || all[0].Spec.Command != "echo a" {
		t.Fatalf("callbacks: %d %+v, want the 3 fired, queued, the DAG-level one without a task", total, all)
	}
	page, total, err := store.List(f.ctx, &store.CallbackListParams{DagRunID: r.ID, TaskID: "a",
		Page: store.Page{Limit: 1, Offset: 1, OrderBy: "-id"}}, f.st.CallbackList, f.st.CallbackCount)
	must(t, err, "list a page")
	if total != 2 || len(page) != 1 || page[0].ID != all[0].ID {
		t.Fatalf("task a's second page by -id: %d %+v, want the first callback of 2", total, page)
	}

	got, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w1", Limit: 2, Now: f.now})
	must(t, err, "claim")
	if len(got) != 2 || got[0].ID != all[0].ID || got[1].ID != all[1].ID || got[0].State != core.CallbackRunning ||
		got[0].Attempts != 1 || got[0].WorkerID != "w1" {
		t.Fatalf("claimed %+v, want the two oldest, running for w1, attempt 1", got)
	}
	rest, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w2", Limit: 5, Now: f.now})
	must(t, err, "claim the rest")
	if len(rest) != 1 || rest[0].ID != all[2].ID {
		t.Fatalf("second claim got %+v, want only the DAG-level callback", rest)
	}

	wantErr(t, f.st.CallbackHeartbeat(f.ctx, got[0].ID, 2, f.now), core.ErrConflict, "another attempt's heartbeat")
	must(t, f.st.CallbackHeartbeat(f.ctx, got[0].ID, 1, f.at(time.Minute)), "heartbeat")
	wantErr(t, f.st.CallbackFinish(f.ctx, &store.CallbackFinishParams{ID: got[0].ID, Attempt: 1,
		State: core.CallbackRunning, Now: f.now}), core.ErrInvalid, "finish as running")
	must(t, f.st.CallbackFinish(f.ctx, &store.CallbackFinishParams{ID: got[0].ID, Attempt: 1,
		State: core.CallbackFailed, Error: "exit status 3", Now: f.at(2 * time.Minute)}), "finish")
	err = f.st.CallbackFinish(f.ctx, &store.CallbackFinishParams{ID: got[0].ID, Attempt: 1, State: core.CallbackSuccess, Now: f.now})
	wantErr(t, err, core.ErrConflict, "finish twice")
	cb, err := f.st.CallbackGet(f.ctx, got[0].ID)
	must(t, err, "get")
	if cb.State != core.CallbackFailed || cb.Error != "exit status 3" || cb.EndedAt == nil || !cb.EndedAt.Equal(f.at(2*time.Minute)) {
		t.Fatalf("finished callback %+v, want failed with its error and end", cb)
	}
	_, err = f.st.CallbackGet(f.ctx, 9999)
	wantErr(t, err, core.ErrNotFound, "get unknown")

	// Dead workers: got[1] (w1, heartbeat at now) and rest[0] (w2) are
	// stale at now+1m; got[1] has attempts left, rest[0] is given none.
	requeued, failed, err := f.st.CallbackRequeueStale(f.ctx, &store.CallbackStaleParams{Before: f.at(time.Second),
		MaxAttempts: 1, Now: f.at(time.Minute)})
	must(t, err, "requeue stale (1 attempt)")
	if requeued != 0 || failed != 2 {
		t.Fatalf("with max 1 attempt: requeued %d failed %d, want 0 and 2", requeued, failed)
	}
	must(t, f.st.CallbackInsert(f.ctx, []core.Callback{callbackOf(r, "b", core.OnRetry, 0)}, f.now), "insert b")
	claimed, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w3", Limit: 5, Now: f.now})
	must(t, err, "claim b")
	requeued, failed, err = f.st.CallbackRequeueStale(f.ctx, &store.CallbackStaleParams{Before: f.at(time.Second),
		MaxAttempts: 3, Now: f.at(time.Minute)})
	must(t, err, "requeue stale")
	if len(claimed) != 1 || requeued != 1 || failed != 0 {
		t.Fatalf("claimed %d; requeued %d failed %d, want 1 requeued", len(claimed), requeued, failed)
	}
	again, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w4", Limit: 5, Now: f.at(time.Minute)})
	must(t, err, "claim again")
	if len(again) != 1 || again[0].ID != claimed[0].ID || again[0].Attempts != 2 || again[0].WorkerID != "w4" {
		t.Fatalf("claimed again %+v, want b's callback, attempt 2, for w4", again)
	}
	wantErr(t, f.st.CallbackFinish(f.ctx, &store.CallbackFinishParams{ID: again[0].ID, Attempt: 1,
		State: core.CallbackSuccess, Now: f.now}), core.ErrConflict, "the dead worker's late report (attempt 1)")
}

func testCallbackWithStateChange(t *testing.T, f *fixture) {
	r := f.run("etl", "r1")
	boom := errors.New("boom")
	err := f.st.WithTx(f.ctx, func(tx store.Store) error {
		if err := tx.CallbackInsert(f.ctx, []core.Callback{callbackOf(r, "a", core.OnSuccess, 0)}, f.now); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("tx: %v", err)
	}
	n, err := f.st.CallbackCount(f.ctx, &store.CallbackListParams{DagRunID: r.ID})
	must(t, err, "count")
	if n != 0 {
		t.Fatalf("%d callbacks after a rolled-back state change, want none", n)
	}
}
