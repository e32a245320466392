package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestLinearChainSucceeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "chain", Tasks: []core.Task{
		{TaskID: "c", DependsOn: []string{"b"}},
		{TaskID: "b", DependsOn: []string{"a"}},
		{TaskID: "a"},
	}})
	run := h.trigger("chain")
	rounds, state := h.drive(run, succeed)
	if state != core.RunSuccess {
		t.Fatalf("run = %s, want success", state)
	}
	if diff := cmp.Diff([][]string{{"a"}, {"b"}, {"c"}}, rounds); diff != "" {
		t.Errorf("execution order (-want +got):\n%s", diff)
	}
	if r := h.run(run); r.StartDate == nil || r.EndDate == nil {
		t.Errorf("finished run has start %v end %v, want both set", r.StartDate, r.EndDate)
	}
}

func TestRetryHonoursDelayThenSucceeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "flaky", Tasks: []core.Task{
		{TaskID: "a", Retries: 2, RetryDelay: core.Duration(time.Minute)},
		{TaskID: "b", DependsOn: []string{"a"}},
	}})
	run := h.trigger("flaky")
	failFirst := func(ti core.TaskInstance) (core.TIState, any) {
		if ti.TaskID == "a" && ti.TryNumber == 1 {
			return core.TIFailed, nil
		}
		return core.TISuccess, nil
	}
	h.step()
	if ran := h.work(failFirst); len(ran) != 1 {
		t.Fatalf("first round ran %v, want a", ran)
	}
	h.step()
	if got := h.states(run)["a"]; got != "up_for_retry" {
		t.Fatalf("a = %s, want up_for_retry", got)
	}
	h.clk.Advance(59 * time.Second)
	h.step()
	if ran := h.work(failFirst); len(ran) != 0 {
		t.Fatalf("retried %v before the retry delay passed", ran)
	}
	h.clk.Advance(time.Second)
	rounds, state := h.drive(run, failFirst)
	if state != core.RunSuccess {
		t.Fatalf("run = %s, want success after the retry", state)
	}
	if diff := cmp.Diff([][]string{{"a"}, {"b"}}, rounds); diff != "" {
		t.Errorf("rounds after the delay (-want +got):\n%s", diff)
	}
	hist, err := h.st.TaskInstanceHistory(h.ctx, "flaky", run.RunID, "a", -1)
	if err != nil || len(hist) != 1 || hist[0].State != core.TIFailed {
		t.Errorf("history of a = %+v (err %v), want one failed try", hist, err)
	}
	for _, ti := range h.tis(run) {
		if ti.TaskID == "a" && ti.TryNumber != 2 {
			t.Errorf("a ended at try %d, want 2", ti.TryNumber)
		}
	}
}

func TestRetriesExhaustedFailRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "bad", Tasks: []core.Task{{TaskID: "a", Retries: 1}}})
	run := h.trigger("bad")
	fail := func(core.TaskInstance) (core.TIState, any) { return core.TIFailed, nil }
	rounds, state := h.drive(run, fail)
	if state != core.RunFailed || len(rounds) != 2 {
		t.Errorf("run = %s after %d tries, want failed after 2", state, len(rounds))
	}
}

func TestTriggerRulesAcrossFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "rules", Tasks: []core.Task{
		{TaskID: "ok"},
		{TaskID: "boom"},
		{TaskID: "needs_all", DependsOn: []string{"ok", "boom"}},
		{TaskID: "on_fail", DependsOn: []string{"ok", "boom"}, TriggerRule: core.OneFailed},
		{TaskID: "one_ok", DependsOn: []string{"ok", "boom"}, TriggerRule: core.OneSuccess},
		{TaskID: "cleanup", DependsOn: []string{"needs_all"}, TriggerRule: core.AllDone},
		{TaskID: "after_all", DependsOn: []string{"needs_all"}},
		{TaskID: "none_failed", DependsOn: []string{"on_fail"}, TriggerRule: core.NoneFailed},
	}})
	run := h.trigger("rules")
	out := func(ti core.TaskInstance) (core.TIState, any) {
		if ti.TaskID == "boom" {
			return core.TIFailed, nil
		}
		return core.TISuccess, nil
	}
	_, state := h.drive(run, out)
	want := map[string]string{
		"ok": "success", "boom": "failed", "needs_all": "upstream_failed", "on_fail": "success",
		"one_ok": "success", "cleanup": "success", "after_all": "upstream_failed", "none_failed": "success",
	}
	if diff := cmp.Diff(want, h.states(run)); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if state != core.RunFailed {
		t.Errorf("run = %s, want failed (leaf after_all is upstream_failed)", state)
	}
}

func TestClearedRunRunsAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "again", Tasks: []core.Task{{TaskID: "a"}, {TaskID: "b", DependsOn: []string{"a"}}}})
	run := h.trigger("again")
	fail := func(ti core.TaskInstance) (core.TIState, any) {
		if ti.TaskID == "b" && ti.TryNumber == 1 {
			return core.TIFailed, nil
		}
		return core.TISuccess, nil
	}
	if _, state := h.drive(run, fail); state != core.RunFailed {
		t.Fatalf("run = %s, want failed", state)
	}
	if _, err := h.svc(h.clk).Clear(h.ctx, core.System, service.ClearParams{DagID: "again", RunID: run.RunID, OnlyFailed: true}); err != nil {
		t.Fatal(err)
	}
	rounds, state := h.drive(run, fail)
	if state != core.RunSuccess || !cmp.Equal([][]string{{"b"}}, rounds) {
		t.Errorf("after clearing failed: run = %s, rounds %v; want success running only b", state, rounds)
	}
}

func TestMarkSuccessLetsRunFinish(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "mark", Tasks: []core.Task{{TaskID: "a"}, {TaskID: "b", DependsOn: []string{"a"}}}})
	run := h.trigger("mark")
	h.step()
	a := h.tis(run)[0]
	if _, err := h.svc(h.clk).MarkTaskInstance(h.ctx, core.System, keyOf(a), core.TISuccess); err != nil {
		t.Fatal(err)
	}
	rounds, state := h.drive(run, succeed)
	if state != core.RunSuccess || !cmp.Equal([][]string{{"b"}}, rounds) {
		t.Errorf("run = %s, rounds %v; want success running only b", state, rounds)
	}
}

func TestStartWakesOnNotifyAndStops(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "live", Tasks: []core.Task{{TaskID: "a"}}})
	// A long poll interval: only the notification can wake the loop in time.
	s := &scheduler.Scheduler{Store: h.st, Clock: core.SystemClock{}, Config: scheduler.Config{PollInterval: time.Hour}}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	done := make(chan error, 1)
	queued := h.st.Subscribe(ctx, store.ChannelQueued)
	go func() { done <- s.Start(ctx) }()

	run := h.trigger("live")
	waitFor(t, queued, func() bool { return h.states(run)["a"] == "queued" })
	tis := h.claim("w", 1)
	h.finish(tis[0], succeed)
	if err := h.st.Notify(h.ctx, store.ChannelScheduler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, nil, func() bool { return h.run(run).State == core.RunSuccess })

	s.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start returned %v, want nil on Stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Start did not return after Stop")
	}
}

// A light pass (the wake-up of a try's end) queues the next task; the
// pass that finishes a run asks for a whole one within the same wake-up,
// which starts the DAG's queued run (max_active_runs 1).
func TestLightPassesFinishRunsAndStartTheNext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "chain", MaxActiveRuns: 1,
		Tasks: []core.Task{{TaskID: "a"}, {TaskID: "b", DependsOn: []string{"a"}}}})
	light := func() {
		t.Helper()
		if err := scheduler.WakeLight(h.ctx, h.s); err != nil {
			t.Fatal(err)
		}
	}
	first := h.trigger("chain")
	h.clk.Advance(time.Second)
	second := h.trigger("chain")
	h.step() // a whole pass: the first run starts, its a is queued
	h.finish(h.claim("w", 1)[0], succeed)
	light()
	if got := h.states(first)["b"]; got != "queued" {
		t.Fatalf("after a light pass b is %s, want queued", got)
	}
	h.finish(h.claim("w", 1)[0], succeed)
	light()
	if got := h.run(first).State; got != core.RunSuccess {
		t.Fatalf("first run is %s, want success", got)
	}
	if got := h.run(second).State; got != core.RunRunning {
		t.Fatalf("second run is %s after the first finished, want running", got)
	}
	if got := h.states(second)["a"]; got != "queued" {
		t.Fatalf("second run's a is %s, want queued", got)
	}
}

// waitFor waits until cond holds, re-checking whenever signal fires (or
// every few milliseconds); it fails the test after a generous deadline.
func waitFor(t *testing.T, signal <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-signal:
		case <-tick.C:
		case <-deadline:
			t.Fatal("condition not reached")
		}
	}
}

// stoppingBackfills is a store on which listing the backfills finds the
// caller's context ended: the scheduler stopped in the middle of a pass.
type stoppingBackfills struct {
	store.Store
	stop context.CancelFunc
}

func (s stoppingBackfills) BackfillList(ctx context.Context, _ *store.BackfillListParams) ([]core.Backfill, error) {
	s.stop()
	return nil, ctx.Err()
}

// TestStoppingInAPassIsNoError: a scheduler stopped while its pass
// completes backfills (the end of every `weir dags test`) ends the pass
// with the context's error and logs no error.
func TestStoppingInAPassIsNoError(t *testing.T) {
	st := sqlitetest.Open(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs bytes.Buffer
	s := &scheduler.Scheduler{Store: st, Clock: clocktest.New(t0), Config: scheduler.Config{HeartbeatTimeout: time.Minute},
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
		Service: service.New(service.Config{Store: stoppingBackfills{Store: st, stop: stop}, Clock: clocktest.New(t0)})}
	if err := s.RunOnce(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunOnce = %v, want context.Canceled", err)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("a stop logged an error:\n%s", logs.String())
	}
}
