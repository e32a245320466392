package scheduler_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestDeadWorkerTryIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "dead", Tasks: []core.Task{
		{TaskID: "a", Retries: 1, RetryDelay: core.Duration(10 * time.Second)},
	}})
	run := h.trigger("dead")
	h.step()
	tis := h.claim("w1", 1) // w1 starts the try, then dies
	if len(tis) != 1 {
		t.Fatalf("claimed %d, want 1", len(tis))
	}
	h.clk.Advance(59 * time.Second) // HeartbeatTimeout is one minute
	h.step()
	if got := h.states(run)["a"]; got != "running" {
		t.Fatalf("a = %s before the heartbeat timeout, want running", got)
	}
	// Detected at the next check (every HeartbeatTimeout/4) past the timeout.
	h.clk.Advance(15 * time.Second)
	h.step()
	ti := h.tis(run)[0]
	if ti.State != core.TIUpForRetry || ti.NextRetryAt == nil || !ti.NextRetryAt.Equal(h.clk.Now().Add(10*time.Second)) {
		t.Fatalf("a = %s next retry %v, want up_for_retry in 10s", ti.State, ti.NextRetryAt)
	}
	// The dead worker's late report is refused: its try is over.
	err := h.st.TaskInstanceFinish(h.ctx, &store.TaskInstanceFinishParams{ID: tis[0].ID, State: core.TISuccess, Now: h.clk.Now()})
	if err == nil {
		t.Error("a dead worker could still finish its try")
	}
	h.clk.Advance(10 * time.Second)
	rounds, state := h.drive(run, succeed)
	if state != core.RunSuccess || len(rounds) != 1 {
		t.Errorf("run = %s after %v, want success after one more try", state, rounds)
	}
}

func TestDeadWorkerLastTryFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "dead2", Tasks: []core.Task{{TaskID: "a"}}})
	run := h.trigger("dead2")
	h.step()
	h.claim("w1", 1)
	h.clk.Advance(2 * time.Minute)
	h.step()
	if got := h.run(run).State; got != core.RunFailed {
		t.Errorf("run = %s, want failed when the only try's worker died (instances %v)", got, h.states(run))
	}
}

func TestStaleClaimIsReleased(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "claimed", Tasks: []core.Task{{TaskID: "a"}}})
	run := h.trigger("claimed")
	h.step()
	// w1 claims but dies before starting the try.
	claimed, err := h.st.TaskInstanceClaim(h.ctx, &store.TaskInstanceClaimParams{
		WorkerID: "w1", Queues: []string{core.DefaultQueue}, Limit: 1, Now: h.clk.Now()})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %d instances", err, len(claimed))
	}
	if again := h.claim("w2", 1); len(again) != 0 {
		t.Fatal("a claimed instance was claimed twice")
	}
	h.clk.Advance(2 * time.Minute)
	h.step()
	tis := h.claim("w2", 1)
	if len(tis) != 1 || tis[0].TryNumber != claimed[0].TryNumber {
		t.Fatalf("w2 claimed %d instances after the stale claim, want the same try", len(tis))
	}
	h.finish(tis[0], succeed)
	h.step()
	if got := h.run(run).State; got != core.RunSuccess {
		t.Errorf("run = %s, want success", got)
	}
}

// docs/state-machines.md#dead-workers: while no api-server is up, no
// heartbeat or start can arrive, so nothing is failed over or released;
// once one is back, the workers get a whole heartbeat timeout to be heard.
func TestNoFailoverUntilAnAPIServerWasUpForTheTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "outage", Tasks: []core.Task{
		{TaskID: "a", Retries: 1, RetryDelay: core.Duration(time.Hour)}, {TaskID: "b", Retries: 1, RetryDelay: core.Duration(time.Hour)},
	}})
	run := h.trigger("outage")
	h.step()
	started := h.claim("w1", 1) // running, heartbeating until the outage
	claimed, err := h.st.TaskInstanceClaim(h.ctx, &store.TaskInstanceClaimParams{
		WorkerID: "w1", Queues: []string{core.DefaultQueue}, Limit: 1, Now: h.clk.Now()})
	if err != nil || len(started) != 1 || len(claimed) != 1 {
		t.Fatalf("claims: %v, %d started, %d claimed", err, len(started), len(claimed))
	}
	want := map[string]string{started[0].TaskID: "running", claimed[0].TaskID: "queued"}
	check := func(when string) {
		t.Helper()
		got := h.states(run)
		for task, state := range want {
			if got[task] != state {
				t.Fatalf("%s: %s = %s, want %s (%v)", when, task, got[task], state, got)
			}
		}
	}

	var logs bytes.Buffer
	h.s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h.apiDown = true // every api-server is down for five minutes
	for range 20 {
		h.clk.Advance(15 * time.Second)
		h.step()
	}
	check("during a five-minute outage")

	h.apiDown = false // one api-server starts again
	h.api = core.Job{ID: "api-2", Role: "api-server", Hostname: "h", PID: 2, StartedAt: h.clk.Now()}
	for range 3 {
		h.clk.Advance(15 * time.Second)
		h.step()
	}
	h.clk.Advance(14 * time.Second)
	h.step()
	check("59 s after the api-server came back")
	if n := strings.Count(logs.String(), "are not failed over or released yet"); n != 1 {
		t.Errorf("%d notes that silent tries wait for the api-server's uptime in its first minute, want 1 (once a minute):\n%s", n, logs.String())
	}

	// No word from the worker for a whole timeout while the scheduler saw
	// the api-server up (from its first check after the return, within
	// one check interval, 15 s).
	for range 3 {
		h.clk.Advance(15 * time.Second)
		h.step()
		if h.states(run)[started[0].TaskID] != "running" {
			break
		}
	}
	want[started[0].TaskID] = "up_for_retry"
	check("a timeout and a check interval after the api-server came back")
	if again := h.claim("w2", 1); len(again) != 1 || again[0].ID != claimed[0].ID {
		t.Errorf("w2 claimed %v, want the released claim %s", again, claimed[0].ID)
	}
}

// docs/state-machines.md#dead-workers: a worker that heartbeats as a
// worker and falls silent has its tries failed over after two of its
// heartbeat intervals, long before the per-try heartbeat timeout (a
// minute here); its live sibling's tries are left alone.
func TestSilentWorkerFailsOverWithinTwoBeats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "beats", Tasks: []core.Task{
		{TaskID: "a", Retries: 1, RetryDelay: core.Duration(time.Hour)}, {TaskID: "b", Retries: 1, RetryDelay: core.Duration(time.Hour)},
	}})
	run := h.trigger("beats")
	h.step()
	onW1, onW2 := h.claim("w1", 1), h.claim("w2", 1)
	beat := func(worker string, holding ...string) {
		t.Helper()
		err := h.st.WorkerHeartbeat(h.ctx, &store.WorkerHeartbeatParams{Job: core.Job{ID: worker + "-p", Role: "worker",
			WorkerID: worker, Hostname: "h", StartedAt: t0, Heartbeat: h.clk.Now(), Interval: 5 * time.Second}, Holding: holding})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 4 { // both alive for 20 s
		beat("w1", onW1[0].ID)
		beat("w2", onW2[0].ID)
		h.clk.Advance(5 * time.Second)
		h.step()
	}
	// w1 dies right after its last beat; w2 goes on.
	beat("w1", onW1[0].ID)
	beat("w2", onW2[0].ID)
	for range 3 {
		h.clk.Advance(3 * time.Second)
		beat("w2", onW2[0].ID)
		h.step()
	}
	if got := h.states(run); got[onW1[0].TaskID] != "running" {
		t.Fatalf("9 s after w1's last beat: %v, want its try still running", got)
	}
	// Failed over at the first check (every 2.5 s) past two beats (10 s).
	silent := 9 * time.Second
	for h.states(run)[onW1[0].TaskID] == "running" && silent < 13*time.Second {
		h.clk.Advance(time.Second)
		silent += time.Second
		beat("w2", onW2[0].ID)
		h.step()
	}
	got := h.states(run)
	if got[onW1[0].TaskID] != "up_for_retry" || got[onW2[0].TaskID] != "running" || silent > 13*time.Second {
		t.Errorf("%s after w1's last beat: %v, want w1's try up_for_retry (by 12.5 s) and w2's running", silent, got)
	}
}

// jobListCounter counts the reads of the job rows.
type jobListCounter struct {
	store.Store
	n *int
}

func (c jobListCounter) JobList(ctx context.Context) ([]core.Job, error) {
	*c.n++
	return c.Store.JobList(ctx)
}

// A pass whose two checks both judge by the job rows (the api-servers'
// uptime, the workers' heartbeats) reads them once: a home where many
// processes ran keeps an hour of rows, and each read of them was a
// `weir dags test`'s whole first pass over again.
func TestAPassReadsTheJobRowsOnce(t *testing.T) {
	t.Parallel()
	reads := 0
	h := newHarnessOn(t, jobListCounter{sqlitetest.Open(t), &reads}, core.DAG{DagID: "j", Tasks: []core.Task{{TaskID: "a"}}})
	h.step() // a scheduler's first pass: every check is due
	if reads != 1 {
		t.Errorf("the first pass read the job rows %d times, want once", reads)
	}
}

// An api-server starting beside the scheduler (standalone, `weir dags
// test`) writes its job row a moment after the scheduler's first check:
// no warning. One missing for two of its heartbeat intervals is warned
// of, once a minute.
func TestNoAPIServerIsWarnedOfOnceItIsReallyDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var logs bytes.Buffer
	h.s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	warnings := func() int { return strings.Count(logs.String(), "no api-server is up") }

	h.apiDown = true // not started yet
	h.step()
	h.apiDown = false // up a moment later
	h.clk.Advance(15 * time.Second)
	h.step()
	if n := warnings(); n != 0 {
		t.Fatalf("%d warnings for an api-server that started with the scheduler:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "up only since") {
		t.Fatalf("a scheduler starting with no try running explains why none is failed over:\n%s", logs.String())
	}

	h.apiDown = true
	h.clk.Advance(time.Minute) // its last heartbeat too old: down from this check on
	h.step()
	h.clk.Advance(15 * time.Second)
	h.step()
	if n := warnings(); n != 0 {
		t.Fatalf("%d warnings 15 s into an outage, want none before 20 s", n)
	}
	for range 4 { // 75 s in
		h.clk.Advance(15 * time.Second)
		h.step()
	}
	if n := warnings(); n != 1 {
		t.Fatalf("%d warnings 75 s into an outage, want 1 (once a minute):\n%s", n, logs.String())
	}
	h.clk.Advance(15 * time.Second)
	h.step()
	if n := warnings(); n != 2 {
		t.Fatalf("%d warnings 90 s into an outage, want 2", n)
	}
}

// A `weir dags test` killed before its run ended leaves the run running,
// its instances holding the DAG's slots: a scheduler fails it once the
// test's job row has been silent for two of its intervals. A confined
// scheduler (another test's) judges its own DAG's runs alone; a live
// test's run is left alone.
func TestGoneDagsTestsRunIsFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "t", Tasks: []core.Task{{TaskID: "a"}, {TaskID: "b", DependsOn: []string{"a"}}}},
		core.DAG{DagID: "u", Tasks: []core.Task{{TaskID: "a"}}})
	h.s.Config.OnlyDagID = "t"
	testRun := func(dagID, job string) *core.DagRun {
		t.Helper()
		run, err := h.svc(h.clk).TriggerRun(h.ctx, core.System, runs.TriggerParams{DagID: dagID, RunID: dagID + "-" + job,
			Running: true, TestJobID: job})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	beat := func(jobs ...string) {
		t.Helper()
		for _, id := range jobs {
			if err := h.st.JobHeartbeat(h.ctx, &core.Job{ID: id, Role: "api-server", Hostname: "h", PID: 9,
				StartedAt: t0, Heartbeat: h.clk.Now(), Interval: 5 * time.Second}); err != nil {
				t.Fatal(err)
			}
		}
	}
	killed, live, other := testRun("t", "killed"), testRun("t", "live"), testRun("u", "other")
	// A test killed after its run ended, while the callbacks its end fired
	// were to run.
	ended := testRun("t", "ended")
	if _, err := h.st.DagRunSetState(h.ctx, &store.DagRunSetStateParams{ID: ended.ID, To: core.RunSuccess, Now: h.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := h.st.CallbackInsert(h.ctx, []core.Callback{{Level: core.CallbackDag, Event: core.OnSuccess, DagID: ended.DagID,
		RunID: ended.RunID, DagRunID: ended.ID, MapIndex: core.NoMapIndex, Spec: core.CallbackSpec{Command: "echo"}, Outcome: "success"}},
		h.clk.Now()); err != nil {
		t.Fatal(err)
	}
	h.step()
	for _, r := range []*core.DagRun{killed, live} { // each by its test's own worker
		got, err := h.st.TaskInstanceClaim(h.ctx, &store.TaskInstanceClaimParams{WorkerID: "test", Limit: 1, Now: h.clk.Now(),
			DagRunID: r.ID, Start: true, Hostname: "h", PID: 9})
		if err != nil || len(got) != 1 {
			t.Fatalf("the test of run %s claimed %d tries (%v), want its first", r.RunID, len(got), err)
		}
	}
	for range 4 {
		beat("killed", "live", "other", "ended")
		h.clk.Advance(5 * time.Second)
		h.step()
	}
	// All three processes die but "live", which goes on beating.
	for i := range 5 {
		if r := h.run(killed); i == 1 && r.State != core.RunRunning {
			t.Fatalf("8 s after its test's last beat: run %s, want running still", r.State)
		}
		h.clk.Advance(3 * time.Second)
		beat("live")
		h.step()
	}
	if r := h.run(killed); r.State != core.RunFailed {
		t.Fatalf("20 s after its test's last beat: run %s, want failed", r.State)
	}
	if got := h.states(killed); got["a"] != "failed" || got["b"] != "skipped" {
		t.Errorf("the failed run's instances: %v, want a (running) failed and b skipped", got)
	}
	if r := h.run(live); r.State != core.RunRunning {
		t.Errorf("the live test's run: %s, want running", r.State)
	}
	if r := h.run(other); r.State != core.RunRunning {
		t.Errorf("another DAG's run, for a scheduler confined to t: %s, want running (the deployment's to judge)", r.State)
	}
	// The gone tests' runs are theirs no more; the callback the killed test
	// had not run failed, saying why, and no deployment takes it.
	for _, r := range []*core.DagRun{killed, ended} {
		if got := h.run(r); got.TestJobID != "" {
			t.Errorf("run %s of a gone test: TestJobID %q, want none", r.RunID, got.TestJobID)
		}
	}
	if r := h.run(ended); r.State != core.RunSuccess {
		t.Errorf("the ended run of a gone test: %s, want success kept", r.State)
	}
	cbs, err := h.st.CallbackList(h.ctx, &store.CallbackListParams{DagRunID: ended.ID})
	if err != nil || len(cbs) != 1 || cbs[0].State != core.CallbackFailed || !strings.Contains(cbs[0].Error, "stopped before this callback ended") {
		t.Errorf("the callback a gone test had not run: %+v, %v; want it failed, saying why", cbs, err)
	}
	if r := h.run(live); r.TestJobID != "live" {
		t.Errorf("the live test's run: TestJobID %q, want its test's", r.TestJobID)
	}
}

// Prime leaves the look for stale tries to the loop, an interval later,
// and the loop still takes it: a try whose heartbeats stopped is failed
// over one check past the Prime.
func TestPrimeLeavesTheLookForStaleTriesToTheLoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "primed", Tasks: []core.Task{{TaskID: "a"}}})
	run := h.trigger("primed")
	h.step()
	h.claim("w1", 1) // w1 starts the try, then dies
	h.clk.Advance(2 * time.Minute)
	h.api.Heartbeat = h.clk.Now()
	if err := h.st.JobHeartbeat(h.ctx, &h.api); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	if err := h.s.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.states(run)["a"]; got != "running" {
		t.Fatalf("a = %s after Prime, want running: Prime looked for stale tries", got)
	}
	h.clk.Advance(15 * time.Second) // the look's interval, HeartbeatTimeout/4
	h.step()
	if got := h.run(run).State; got != core.RunFailed {
		t.Errorf("run = %s an interval after Prime, want failed: the loop never looked for the stale try (instances %v)",
			got, h.states(run))
	}
}
