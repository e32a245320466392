package service_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// firedCallbacks lists the events of run's callbacks, in order.
func firedCallbacks(t *testing.T, st store.Store, run *core.DagRun) []string {
	t.Helper()
	cbs, err := st.CallbackList(context.Background(), &store.CallbackListParams{DagRunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cb := range cbs {
		out = append(out, fmt.Sprintf("%s:%s:%d", cb.TaskID, cb.Event, cb.TryNumber))
	}
	return out
}

// TestCallbacksFireWithTheirStateChange checks that each state change
// fires its callbacks once, in its transaction: a refused change (a try
// that already ended, a run another scheduler finished) fires nothing.
func TestCallbacksFireWithTheirStateChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	svc := newSvc(st, clk)
	cmd := []core.CallbackSpec{{Command: "echo"}}
	dag := core.DAG{DagID: "cb", Callbacks: &core.Callbacks{OnFailure: cmd, OnSuccess: cmd}, Tasks: []core.Task{
		{TaskID: "a", Operator: "noop", Retries: 1, RetryDelay: core.Duration(time.Minute),
			Callbacks: &core.Callbacks{OnExecute: cmd, OnRetry: cmd, OnFailure: cmd}},
	}}
	syncDAG(t, st, dag)
	run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "cb"})
	if err != nil {
		t.Fatal(err)
	}
	// startTry starts through the store, as a worker's claim: on_execute
	// fires through the service's StartTry.
	ti := listTIs(t, st, run.ID)["a"]
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: core.TIQueued, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TaskInstanceClaim(ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 1, Now: t0}); err != nil {
		t.Fatal(err)
	}
	a, err := svc.StartTry(ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: "w", Now: t0}, ti.DagVersionID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StartTry(ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: "w", Now: t0}, ti.DagVersionID); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("second start: %v, want ErrConflict", err)
	}
	if _, err := svc.FinishTry(ctx, a, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.FinishTry(ctx, a, core.TIFailed); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("second finish: %v, want ErrConflict", err)
	}
	retryTry(t, st, a)
	a = startTry(t, st, run, "a") // through the store: no on_execute
	if _, err := svc.FinishTry(ctx, a, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunRunning, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if ok, err := svc.FinishRun(ctx, run, &dag, core.RunFailed, t0); err != nil || !ok {
		t.Fatalf("finish run: %v %v", ok, err)
	}
	if ok, err := svc.FinishRun(ctx, run, &dag, core.RunFailed, t0); err != nil || ok {
		t.Fatalf("finish a finished run again: %v %v, want false", ok, err)
	}
	got := fmt.Sprint(firedCallbacks(t, st, run))
	if want := "[a:on_execute:1 a:on_retry:1 a:on_failure:2 :on_failure:0]"; got != want {
		t.Fatalf("fired %s, want %s", got, want)
	}
}

// TestClaimTriesFiresOnExecuteWithTheStart: a claim that starts its tries
// fires their on_execute callbacks in its transaction, once: a reclaim that
// returns the started tries (a lost answer) fires nothing again.
func TestClaimTriesFiresOnExecuteWithTheStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	svc := newSvc(st, clk)
	cmd := []core.CallbackSpec{{Command: "echo"}}
	dag := core.DAG{DagID: "cb", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop", Callbacks: &core.Callbacks{OnExecute: cmd}},
		{TaskID: "b", Operator: "noop"},
	}}
	syncDAG(t, st, dag)
	run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "cb"})
	if err != nil {
		t.Fatal(err)
	}
	tis := listTIs(t, st, run.ID)
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{tis["a"].ID, tis["b"].ID}, To: core.TIQueued, Now: t0}); err != nil {
		t.Fatal(err)
	}
	claim := store.TaskInstanceClaimParams{WorkerID: "w", Limit: 2, Hostname: "h", PID: 7, Start: true, Now: t0}
	for range 2 { // the second is the worker's reclaim after a lost answer
		got, err := svc.ClaimTries(ctx, &claim)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].State != core.TIRunning || got[1].State != core.TIRunning {
			t.Fatalf("claimed %v, want a and b running", got)
		}
		claim.Reclaim = true
	}
	if got, want := fmt.Sprint(firedCallbacks(t, st, run)), "[a:on_execute:1]"; got != want {
		t.Fatalf("fired %s, want %s", got, want)
	}
}

// TestFailedOverTryFiresOnRetryOnlyWhenItsRetryBegins: a try failed over
// for missed heartbeats fires on_retry when its retry begins, not at the
// failover, so one whose worker reports success late fires on_success
// alone — never on_retry and on_success both; a try whose worker reported
// the failure fires on_retry at the report, once.
func TestFailedOverTryFiresOnRetryOnlyWhenItsRetryBegins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	svc := newSvc(st, clk)
	cmd := []core.CallbackSpec{{Command: "echo"}}
	task := core.Task{TaskID: "a", Operator: "noop", Retries: 2, RetryDelay: core.Duration(time.Minute),
		Callbacks: &core.Callbacks{OnRetry: cmd, OnSuccess: cmd}}
	syncDAG(t, st, core.DAG{DagID: "fo", Tasks: []core.Task{task}})
	trigger := func(id string) *core.DagRun {
		run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "fo", RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	beginRetry := func(ti core.TaskInstance) error {
		return svc.BeginRetry(ctx, &task, &ti, &store.TaskInstanceNewTryParams{ID: ti.ID, NewID: ti.ID + "-next",
			To: core.TIScheduled, Now: t0, From: core.TIUpForRetry})
	}

	// Failed over, then the worker's late report of success.
	late := trigger("late")
	a := startTry(t, st, late, "a")
	if res, err := svc.FailDeadTry(ctx, a); err != nil || res.State != core.TIUpForRetry {
		t.Fatalf("fail over: %+v %v", res, err)
	}
	if got := firedCallbacks(t, st, late); len(got) != 0 {
		t.Errorf("the failover fired %v; want nothing until the retry begins", got)
	}
	failedOver := listTIs(t, st, late.ID)["a"]
	if _, err := svc.FinishTry(ctx, &failedOver, core.TISuccess); err != nil {
		t.Fatalf("late success: %v", err)
	}
	if err := beginRetry(failedOver); !errors.Is(err, core.ErrConflict) {
		t.Errorf("retry of a try that succeeded: %v, want ErrConflict", err)
	}
	if got, want := fmt.Sprint(firedCallbacks(t, st, late)), "[a:on_success:1]"; got != want {
		t.Errorf("fired %s, want %s (on_success alone)", got, want)
	}

	// Failed over, and its retry begins: on_retry fires then, once.
	dead := trigger("dead")
	a = startTry(t, st, dead, "a")
	if _, err := svc.FailDeadTry(ctx, a); err != nil {
		t.Fatal(err)
	}
	failedOver = listTIs(t, st, dead.ID)["a"]
	if err := beginRetry(failedOver); err != nil {
		t.Fatalf("begin the retry: %v", err)
	}
	if err := beginRetry(failedOver); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("begin the retry of a replaced try: %v, want ErrNotFound", err)
	}
	if got, want := fmt.Sprint(firedCallbacks(t, st, dead)), "[a:on_retry:1]"; got != want {
		t.Errorf("fired %s, want %s", got, want)
	}

	// Reported failed by its worker: on_retry at the report, not again
	// when the retry begins.
	reported := trigger("reported")
	a = startTry(t, st, reported, "a")
	if _, err := svc.FinishTry(ctx, a, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	if err := beginRetry(listTIs(t, st, reported.ID)["a"]); err != nil {
		t.Fatalf("begin the retry: %v", err)
	}
	if got, want := fmt.Sprint(firedCallbacks(t, st, reported)), "[a:on_retry:1]"; got != want {
		t.Errorf("fired %s, want %s", got, want)
	}
}
