package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testClaimsConfinedToARun covers the claims of a worker and a triggerer
// confined to one run (weir dags test's): they take that run's tries (its
// reclaims too), callbacks and the triggers its tries wait on, and leave
// another run's and every watcher's to the others.
func testClaimsConfinedToARun(t *testing.T, f *fixture) {
	mine, theirs := newTI("a", core.TIQueued), newTI("a", core.TIQueued)
	mineWaits, theirsWait := newTI("wait", core.TIQueued), newTI("wait", core.TIQueued)
	run := f.run("etl", "tested", mine, mineWaits)
	other := f.run("etl", "deployment", theirs, theirsWait)
	confined := func(p store.TaskInstanceClaimParams) []string {
		t.Helper()
		p.DagRunID, p.Now = run.ID, f.now
		got, err := f.st.TaskInstanceClaim(f.ctx, &p)
		must(t, err, "confined claim")
		var ids []string
		for _, ti := range got {
			if ti.DagRunID != run.ID {
				t.Errorf("a claim confined to run %d took %s of run %d", run.ID, ti.TaskID, ti.DagRunID)
			}
			ids = append(ids, ti.ID)
		}
		slices.Sort(ids)
		return ids
	}
	want := []string{mine.ID, mineWaits.ID}
	slices.Sort(want)
	if got := confined(store.TaskInstanceClaimParams{WorkerID: "test", Limit: 10}); !slices.Equal(got, want) {
		t.Fatalf("confined claim took %v, want its run's two tries %v", got, want)
	}
	// The deployment's worker of the same name claims its own run's; a
	// confined reclaim takes back none of them.
	got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "test", Limit: 10, Now: f.now})
	must(t, err, "unconfined claim")
	if len(got) != 2 || got[0].DagRunID != other.ID || got[1].DagRunID != other.ID {
		t.Fatalf("unconfined claim took %v, want the other run's two tries", taskIDs(got))
	}
	if got := confined(store.TaskInstanceClaimParams{WorkerID: "test", Limit: 10, Reclaim: true, Holding: []string{mine.ID}}); !slices.Equal(got, []string{mineWaits.ID}) {
		t.Fatalf("confined reclaim holding %s took %v, want only its run's unheld claim %s", mine.ID, got, mineWaits.ID)
	}

	// Claims that start their tries and read their runs (a worker's), and
	// a reclaim of the tries a worker process started and does not hold.
	startMine, startTheirs := newTI("s", core.TIQueued), newTI("s", core.TIQueued)
	started := f.run("etl", "tested-starts", startMine)
	f.run("etl", "deployment-starts", startTheirs)
	runs := map[int64]*core.DagRun{}
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w9", Limit: 10, Hostname: "h1", PID: 100,
		Start: true, Runs: runs, Now: f.now, DagRunID: started.ID})
	must(t, err, "confined claim that starts")
	if len(got) != 1 || got[0].ID != startMine.ID || got[0].State != core.TIRunning || runs[started.ID] == nil || len(runs) != 1 {
		t.Fatalf("confined claim that starts took %v (runs %v), want %s started with its run only", taskIDs(got), runs, startMine.ID)
	}
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w9", Limit: 10, Hostname: "h1", PID: 100,
		Start: true, Now: f.now})
	must(t, err, "unconfined claim that starts")
	if len(got) != 1 || got[0].ID != startTheirs.ID {
		t.Fatalf("unconfined claim that starts took %v, want the other run's %s", taskIDs(got), startTheirs.ID)
	}
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w9", Limit: 10, Hostname: "h1", PID: 100,
		Reclaim: true, Now: f.now, DagRunID: started.ID})
	must(t, err, "confined reclaim of started tries")
	if len(got) != 1 || got[0].ID != startMine.ID {
		t.Fatalf("confined reclaim of the process's started tries took %v, want its run's %s alone", taskIDs(got), startMine.ID)
	}

	// Callbacks.
	fired := []core.Callback{callbackOf(other, "a", core.OnFailure, 0), callbackOf(run, "a", core.OnFailure, 0)}
	must(t, f.st.CallbackInsert(f.ctx, fired, f.now), "insert callbacks")
	cbs, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "test", Limit: 10, Now: f.now, DagRunID: run.ID})
	must(t, err, "confined callback claim")
	if len(cbs) != 1 || cbs[0].DagRunID != run.ID {
		t.Fatalf("confined callback claim took %+v, want its run's one callback", cbs)
	}

	// Triggers: the other run's deferral and a watcher's trigger stay.
	for _, id := range []string{mineWaits.ID, theirsWait.ID} {
		_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: f.get(id).WorkerID, Now: f.now})
		must(t, err, "start "+id)
	}
	minesTrigger, theirsTrigger := f.deferTI(mineWaits.ID, core.TIRunning, nil), f.deferTI(theirsWait.ID, core.TIRunning, nil)
	// A stream of the run's producer task, its try gone on (resumed).
	_, err = f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: core.TaskStreamID(run.ID, "producer"), MaxPending: 10,
		Trigger: core.TriggerSpec{Type: "timedelta"}, Now: f.now})
	must(t, err, "create the run's producer stream")
	triggers, err := f.st.TriggerList(f.ctx, &store.TriggerListParams{})
	must(t, err, "list triggers")
	streamTrigger := triggers[len(triggers)-1].ID
	must(t, f.assetDag(producer("prod", watched(orders, "landing", `{"path": "/in"}`)), f.now), "declare a watcher")
	ws := f.watchers()
	if len(ws) != 1 {
		t.Fatalf("watchers = %+v, want one", ws)
	}
	alive := f.at(-time.Minute)
	must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: "t-test", Role: "triggerer", Hostname: "h", PID: 1, StartedAt: f.now, Heartbeat: f.now}),
		"the confined triggerer's heartbeat")
	trs, err := f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "t-test", AliveSince: alive, Limit: 10, DagRunID: run.ID})
	must(t, err, "confined trigger claim")
	if len(trs) != 2 || trs[0].ID != minesTrigger || trs[1].ID != streamTrigger {
		t.Fatalf("confined trigger claim took %+v, want only trigger %d its run's try waits on and %d filling its stream", trs, minesTrigger, streamTrigger)
	}
	trs, err = f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "t-deployment", AliveSince: alive, Limit: 10})
	must(t, err, "unconfined trigger claim")
	ids := []int64{}
	for _, tr := range trs {
		ids = append(ids, tr.ID)
	}
	slices.Sort(ids)
	wantIDs := []int64{theirsTrigger, ws[0].TriggerID}
	slices.Sort(wantIDs)
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("the deployment's triggerer took %v, want the other run's and the watcher's %v", ids, wantIDs)
	}
}

// testClaimsLeaveTestRuns: a `weir dags test`'s run is its own worker's
// and triggerer's (TestJobID set): an unconfined claim takes none of its
// tries, callbacks or triggers (those its tries wait on, those filling its
// streams); once it ended and was reopened (cleared), it is the
// deployment's like any run (as once its test ended it: testDagRunEndTest).
func testClaimsLeaveTestRuns(t *testing.T, f *fixture) {
	version := f.dag("etl")
	testTI, deployTI := newTI("a", core.TIQueued), newTI("a", core.TIQueued)
	testWait, deployWait := newTI("w", core.TIRunning), newTI("w", core.TIRunning)
	tested, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "a-test", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: version, Now: f.now, TaskInstances: []store.NewTaskInstance{testTI, testWait}, TestJobID: "job-1"})
	must(t, err, "create a test's run")
	deployed := f.run("etl", "deployed", deployTI, deployWait)
	testTriggers := []int64{f.deferTI(testWait.ID, core.TIRunning, nil)}
	deployTrigger := f.deferTI(deployWait.ID, core.TIRunning, nil)
	_, err = f.st.StreamCreate(f.ctx, &store.StreamCreateParams{ID: core.TaskStreamID(tested.ID, "producer"), MaxPending: 10,
		Trigger: core.TriggerSpec{Type: "timedelta"}, Now: f.now})
	must(t, err, "create the test's run's producer stream")
	triggers, err := f.st.TriggerList(f.ctx, &store.TriggerListParams{})
	must(t, err, "list triggers")
	testTriggers = append(testTriggers, triggers[len(triggers)-1].ID)
	claimTriggers := func(triggerer string) []int64 {
		t.Helper()
		trs, err := f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: triggerer, AliveSince: f.now, Limit: 10})
		must(t, err, "unconfined trigger claim")
		ids := []int64{}
		for _, tr := range trs {
			ids = append(ids, tr.ID)
		}
		slices.Sort(ids)
		return ids
	}
	must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: "t1", Role: "triggerer", Hostname: "h", PID: 1, StartedAt: f.now, Heartbeat: f.now}),
		"the deployment's triggerer's heartbeat")
	if got := claimTriggers("t1"); !slices.Equal(got, []int64{deployTrigger}) {
		t.Fatalf("an unconfined trigger claim took %v, want the deployment's run's %d alone", got, deployTrigger)
	}
	must(t, f.st.CallbackInsert(f.ctx, []core.Callback{callbackOf(tested, "a", core.OnFailure, 0), callbackOf(deployed, "a", core.OnFailure, 0)}, f.now),
		"insert callbacks")
	claim := func() []core.TaskInstance {
		t.Helper()
		got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 10, Hostname: "h", PID: 1, Start: true, Now: f.now,
			Runs: map[int64]*core.DagRun{}}) // a worker's claim: PostgreSQL reads the runs with it
		must(t, err, "unconfined claim")
		return got
	}
	if got := claim(); len(got) != 1 || got[0].ID != deployTI.ID {
		t.Fatalf("an unconfined claim took %v, want the deployment's run's try alone", taskIDs(got))
	}
	cbs, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w", Limit: 10, Now: f.now})
	must(t, err, "unconfined callback claim")
	if len(cbs) != 1 || cbs[0].DagRunID != deployed.ID {
		t.Fatalf("an unconfined callback claim took %+v, want the deployment's run's alone", cbs)
	}
	for _, to := range []core.DagRunState{core.RunFailed, core.RunQueued} { // its test stopped; cleared
		_, err := f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: tested.ID, To: to, Now: f.now})
		must(t, err, "end and reopen the test's run")
	}
	if got := claim(); len(got) != 1 || got[0].ID != testTI.ID {
		t.Fatalf("an unconfined claim after the test's run was reopened took %v, want its try", taskIDs(got))
	}
	if got := claimTriggers("t2"); !slices.Equal(got, testTriggers) {
		t.Errorf("an unconfined trigger claim after the test's run was reopened took %v, want its triggers %v", got, testTriggers)
	}
	cbs, err = f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w", Limit: 10, Now: f.now})
	must(t, err, "unconfined callback claim")
	if len(cbs) != 1 || cbs[0].DagRunID != tested.ID {
		t.Fatalf("an unconfined callback claim after the reopen took %+v, want the reopened run's", cbs)
	}
}

// testDagRunEndTest: a test's run that ended is still its test's until the
// test ends it (DagRunEndTest, ADR 0042): an unconfined claim takes none
// of the callbacks its end fired, its test's confined one does; ending the
// test fails the callbacks not ended with the reason given and makes the
// run the deployment's. Another run's callbacks, a second end and a run
// that is no test's change nothing. The callbacks' states filter their
// list.
func testDagRunEndTest(t *testing.T, f *fixture) {
	version := f.dag("etl")
	tested, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "a-test", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: version, Now: f.now, TestJobID: "job-1"})
	must(t, err, "create a test's run")
	deployed := f.run("etl", "deployed")
	_, err = f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: tested.ID, To: core.RunSuccess, Now: f.now})
	must(t, err, "end the test's run")
	must(t, f.st.CallbackInsert(f.ctx, []core.Callback{callbackOf(tested, "a", core.OnSuccess, 0), callbackOf(tested, "a", core.OnSuccess, 1),
		callbackOf(deployed, "a", core.OnSuccess, 0)}, f.now), "insert callbacks")
	claim := func(runID int64) []core.Callback {
		t.Helper()
		cbs, err := f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w", Limit: 1, Now: f.now, DagRunID: runID})
		must(t, err, "claim callbacks")
		return cbs
	}
	if cbs := claim(0); len(cbs) != 1 || cbs[0].DagRunID != deployed.ID {
		t.Fatalf("an unconfined claim took %+v, want the deployment's run's callback alone", cbs)
	}
	if cbs := claim(0); len(cbs) != 0 {
		t.Fatalf("a second unconfined claim took %+v, want none: the ended run is still its test's", cbs)
	}
	if cbs := claim(tested.ID); len(cbs) != 1 || cbs[0].DagRunID != tested.ID {
		t.Fatalf("the test's confined claim took %+v, want one of its run's callbacks", cbs)
	}
	unfinished := &store.CallbackListParams{DagRunID: tested.ID, States: []core.CallbackState{core.CallbackQueued, core.CallbackRunning}}
	if n, err := f.st.CallbackCount(f.ctx, unfinished); err != nil || n != 2 {
		t.Fatalf("the test's run's unfinished callbacks counted %d, %v; want 2 (one running, one queued)", n, err)
	}

	n, err := f.st.DagRunEndTest(f.ctx, &store.DagRunEndTestParams{ID: tested.ID, Error: "the test stopped", Now: f.at(time.Second)})
	if err != nil || n != 2 {
		t.Fatalf("end the test = %d, %v; want its 2 unfinished callbacks failed", n, err)
	}
	cbs, err := f.st.CallbackList(f.ctx, &store.CallbackListParams{DagRunID: tested.ID})
	must(t, err, "list the test's run's callbacks")
	for _, cb := range cbs {
		if cb.State != core.CallbackFailed || cb.Error != "the test stopped" || cb.EndedAt == nil || !cb.EndedAt.Equal(f.at(time.Second)) {
			t.Errorf("a callback of the ended test: %+v; want failed at the end with its reason", cb)
		}
	}
	if n, err := f.st.CallbackCount(f.ctx, unfinished); err != nil || n != 0 {
		t.Errorf("the test's run's unfinished callbacks after its end: %d, %v; want none", n, err)
	}
	if r, err := f.st.DagRunGetByID(f.ctx, tested.ID); err != nil || r.TestJobID != "" || r.State != core.RunSuccess {
		t.Errorf("the test's run after the test's end: %+v, %v; want success and no TestJobID", r, err)
	}
	if rs, err := f.st.DagRunList(f.ctx, &store.DagRunListParams{Tests: true}); err != nil || len(rs) != 0 {
		t.Errorf("test runs after the test's end: %v, %v; want none", runIDs(rs), err)
	}
	theirs, err := f.st.CallbackList(f.ctx, &store.CallbackListParams{DagRunID: deployed.ID})
	if err != nil || len(theirs) != 1 || theirs[0].State != core.CallbackRunning {
		t.Errorf("the deployment's run's callback: %+v, %v; want it running still", theirs, err)
	}
	for _, id := range []int64{tested.ID, deployed.ID, 1 << 40} { // ended already; no test's; no run
		if n, err := f.st.DagRunEndTest(f.ctx, &store.DagRunEndTestParams{ID: id, Error: "again", Now: f.at(time.Minute)}); err != nil || n != 0 {
			t.Errorf("end the test of run %d = %d, %v; want nothing done", id, n, err)
		}
	}
	if theirs, err := f.st.CallbackList(f.ctx, &store.CallbackListParams{DagRunID: deployed.ID}); err != nil || theirs[0].State != core.CallbackRunning {
		t.Errorf("the deployment's run's callback after ending a test of its run: %+v, %v; want it running still", theirs, err)
	}
}
