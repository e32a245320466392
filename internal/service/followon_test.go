package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// followDAG: a → b → c; a, side → join; b waits in pool "one" (one slot).
var followDAG = core.DAG{DagID: "follow", Tasks: []core.Task{
	{TaskID: "a", Operator: "noop"},
	{TaskID: "b", Operator: "noop", DependsOn: []string{"a"}, Pool: "one"},
	{TaskID: "c", Operator: "noop", DependsOn: []string{"b"}},
	{TaskID: "side", Operator: "noop"},
	{TaskID: "join", Operator: "noop", DependsOn: []string{"a", "side"}},
}}

// heard reports whether ch was notified (waiting briefly: notifications
// are delivered after commit, by another goroutine).
func heard(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(200 * time.Millisecond):
		return false
	}
}

// followRun starts a running run of followDAG in a fresh store with pool
// "one" of one slot, and subscribes to the scheduler's and the workers'
// channels.
func followRun(t *testing.T) (ctx context.Context, st store.Store, svc *service.Service, run *core.DagRun, sched, workers <-chan struct{}) {
	t.Helper()
	return followRunAt(t, clocktest.New(t0))
}

// followRunAt is followRun with the service's clock clk.
func followRunAt(t *testing.T, clk core.Clock) (ctx context.Context, st store.Store, svc *service.Service, run *core.DagRun, sched, workers <-chan struct{}) {
	t.Helper()
	ctx = context.Background()
	st = sqlitetest.Open(t)
	svc = newSvc(st, clk)
	syncDAG(t, st, followDAG)
	if _, err := svc.SavePool(ctx, core.System, service.PoolChange{Name: "one", Slots: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	run = runningRun(t, st, svc, "follow")
	return ctx, st, svc, run, st.Subscribe(ctx, store.ChannelTasks), st.Subscribe(ctx, store.ChannelQueued)
}

func states(t *testing.T, st store.Store, run *core.DagRun) map[string]core.TIState {
	t.Helper()
	out := map[string]core.TIState{}
	for task, ti := range listTIs(t, st, run.ID) {
		out[task] = ti.State
	}
	return out
}

// The success of a try queues the next task of its chain in its own
// transaction and wakes the workers, and not the scheduler when it left it
// nothing to do; an end after which a join still waits wakes it (another
// upstream's end, committing at the same time, may have read this try
// unfinished), and the join's last upstream queues it.
func TestSuccessQueuesWhatFollows(t *testing.T) {
	t.Parallel()
	ctx, st, svc, run, sched, workers := followRun(t)
	whole := st.Subscribe(ctx, store.ChannelScheduler)
	a := startTry(t, st, run, "a")
	if _, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	got := states(t, st, run)
	if got["b"] != core.TIQueued || got["c"] != core.TINone || got["join"] != core.TINone {
		t.Errorf("after a's success: b %s, c %s, join %s; want b queued at once, c and join waiting", got["b"], got["c"], got["join"])
	}
	if !heard(workers) {
		t.Error("the workers were not woken for b")
	}
	if !heard(sched) {
		t.Error("the scheduler was not woken while join waits on side")
	}

	b := startTry(t, st, run, "b")
	if _, err := svc.FinishTry(ctx, b, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if got := states(t, st, run)["c"]; got != core.TIQueued {
		t.Errorf("c after b's success = %s, want queued", got)
	}
	if !heard(workers) {
		t.Error("the workers were not woken for c")
	}
	if heard(sched) || heard(whole) {
		t.Error("the scheduler was woken for a chain's step, which left it nothing to do")
	}

	side := startTry(t, st, run, "side")
	if _, err := svc.FinishTry(ctx, side, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if got := states(t, st, run)["join"]; got != core.TIQueued {
		t.Errorf("join after its last upstream's success = %s, want queued", got)
	}
}

// What the scheduler would not decide is not decided at a try's end
// either: a paused DAG's successors, and a run no longer running; the
// scheduler is woken instead.
func TestSuccessLeavesPausedAndEndedRunsToTheScheduler(t *testing.T) {
	t.Parallel()
	for name, stop := range map[string]func(context.Context, store.Store, *service.Service, *core.DagRun) error{
		"paused dag": func(ctx context.Context, _ store.Store, svc *service.Service, _ *core.DagRun) error {
			_, err := svc.SetDagPaused(ctx, core.System, "follow", true)
			return err
		},
		"run marked failed": func(ctx context.Context, st store.Store, _ *service.Service, run *core.DagRun) error {
			_, err := st.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunFailed, Now: t0})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, st, svc, run, sched, _ := followRun(t)
			a := startTry(t, st, run, "a")
			if err := stop(ctx, st, svc, run); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil {
				t.Fatal(err)
			}
			if got := states(t, st, run)["b"]; got != core.TINone {
				t.Errorf("b = %s, want none (left to the scheduler)", got)
			}
			if !heard(sched) {
				t.Error("the scheduler was not woken")
			}
		})
	}
}

// `weir dags test` runs its one DAG paused or not: a try's success there
// queues what follows it in a paused DAG too.
func TestDagsTestFollowsOnInAPausedDag(t *testing.T) {
	t.Parallel()
	ctx, st, svc, run, _, _ := followRun(t)
	if _, err := svc.SetDagPaused(ctx, core.System, "follow", true); err != nil {
		t.Fatal(err)
	}
	a := startTry(t, st, run, "a")
	only := service.New(service.Config{Store: st, Clock: clocktest.New(t0), OnlyDagID: "follow"})
	if _, err := only.FinishTry(ctx, a, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if got := states(t, st, run)["b"]; got != core.TIQueued {
		t.Errorf("b = %s, want queued by the end of a", got)
	}
}

// A successor whose pool is full is scheduled and waits, as the
// scheduler's queueing would leave it; the end of the try holding the slot
// wakes the scheduler, which queues it.
func TestSuccessorWaitsForItsPool(t *testing.T) {
	t.Parallel()
	ctx, st, svc, run, _, _ := followRun(t)
	hog := core.DAG{DagID: "hog", Tasks: []core.Task{{TaskID: "h", Operator: "noop", Pool: "one"}}}
	syncDAG(t, st, hog)
	hogRun, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "hog"})
	if err != nil {
		t.Fatal(err)
	}
	h := startTry(t, st, hogRun, "h")
	a := startTry(t, st, run, "a")
	if _, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if got := states(t, st, run)["b"]; got != core.TIScheduled {
		t.Fatalf("b while pool one is full = %s, want scheduled", got)
	}
	sched := st.Subscribe(ctx, store.ChannelTasks)
	if _, err := svc.FinishTry(ctx, h, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if !heard(sched) {
		t.Error("the end of the try holding the slot did not wake the scheduler")
	}
	if _, err := svc.QueueScheduled(ctx, service.QueueParams{}); err != nil {
		t.Fatal(err)
	}
	if got := states(t, st, run)["b"]; got != core.TIQueued {
		t.Errorf("b once the slot is free = %s, want queued", got)
	}
}
