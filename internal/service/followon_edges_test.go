package service_test

import (
	"context"
	"os"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pausingStore calls after once a transaction has counted the upstream
// instances of a try's successors, so that a test can interleave two try
// ends the way two api-servers may.
type pausingStore struct {
	store.Store
	after func(ctx context.Context)
}

func (p *pausingStore) WithTx(ctx context.Context, fn func(tx store.Store) error) error {
	return p.Store.WithTx(ctx, func(tx store.Store) error { return fn(&pausingTx{Store: tx, p: p}) })
}

type pausingTx struct {
	store.Store
	p *pausingStore
}

func (x *pausingTx) TaskInstanceStateCounts(ctx context.Context, ids []int64, tasks ...string) ([]store.TaskInstanceStateCount, error) {
	counts, err := x.Store.TaskInstanceStateCounts(ctx, ids, tasks...)
	x.p.after(ctx)
	return counts, err
}

type endOf struct{}

// On PostgreSQL the successes of a join's two upstreams can commit at the
// same time, each reading the other still running: both decide the join
// waits. Neither may then leave the scheduler asleep (the join would wait
// for the fallback poll), whatever else each queued.
func TestConcurrentEndsBeforeAJoinWakeTheScheduler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := postgrestest.Open(t)
	aRead, cRead, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	st := &pausingStore{Store: pg, after: func(ctx context.Context) {
		switch ctx.Value(endOf{}) {
		case "a": // a read c running; c reads a running before a commits
			close(aRead)
			<-cRead
		case "c":
			close(cRead)
			<-aDone
		}
	}}
	svc := service.New(service.Config{Store: st, Clock: clocktest.New(t0)})
	syncDAG(t, pg, core.DAG{DagID: "j", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop"}, {TaskID: "c", Operator: "noop"},
		{TaskID: "b", Operator: "noop", DependsOn: []string{"a"}},
		{TaskID: "e", Operator: "noop", DependsOn: []string{"c"}},
		{TaskID: "d", Operator: "noop", DependsOn: []string{"a", "c"}},
	}})
	run := runningRun(t, pg, svc, "j")
	a, c := startTry(t, pg, run, "a"), startTry(t, pg, run, "c")
	sched := pg.Subscribe(ctx, store.ChannelTasks)
	errs := make(chan error, 2)
	go func() {
		_, err := svc.FinishTry(context.WithValue(ctx, endOf{}, "a"), a, core.TISuccess)
		close(aDone)
		errs <- err
	}()
	<-aRead
	go func() {
		_, err := svc.FinishTry(context.WithValue(ctx, endOf{}, "c"), c, core.TISuccess)
		errs <- err
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := states(t, pg, run)
	if got["b"] != core.TIQueued || got["e"] != core.TIQueued {
		t.Errorf("b %s, e %s; want both queued by their upstream's end", got["b"], got["e"])
	}
	if got["d"] == core.TINone && !heard(sched) {
		t.Error("d waits with a and c succeeded, and neither end woke the scheduler")
	}
}

// failingStore fails every attempt to take the queueing lock, after a
// try's end has scheduled what follows it.
type failingStore struct{ store.Store }

func (f failingStore) WithTx(ctx context.Context, fn func(tx store.Store) error) error {
	return f.Store.WithTx(ctx, func(tx store.Store) error { return fn(failingTx{tx}) })
}

type failingTx struct{ store.Store }

func (x failingTx) TryQueueLock(context.Context) (func() (bool, error), error) {
	return nil, core.ErrConflict // as a deadlock's victim would
}

// When scheduling what follows a success fails half-way, the success
// stands, what the follow-on changed is undone, and the scheduler is woken
// to decide it instead.
func TestSuccessStandsWhenWhatFollowsFails(t *testing.T) {
	t.Parallel()
	for _, grouped := range []bool{false, true} {
		ctx, st, _, run, sched, _ := followRun(t)
		svc := service.New(service.Config{Store: failingStore{st}, Clock: clocktest.New(t0), GroupTryEnds: grouped})
		a := startTry(t, st, run, "a")
		if res, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil || res.State != core.TISuccess {
			t.Fatalf("grouped %v: finish = %+v (err %v), want success", grouped, res, err)
		}
		got := states(t, st, run)
		if got["a"] != core.TISuccess || got["b"] != core.TINone {
			t.Errorf("grouped %v: a %s, b %s; want a success and b back to none, left to the scheduler", grouped, got["a"], got["b"])
		}
		if !heard(sched) {
			t.Errorf("grouped %v: the scheduler was not woken", grouped)
		}
	}
}

// On PostgreSQL the queueing of what follows a success goes with the
// claim of the worker's next try (queueLocked's unread update). When that
// update fails, the claim's statement fails with it: the success stands
// all the same, what follows is left to the scheduler, and the claim is
// made again without it.
func TestSuccessStandsWhenTheQueueingCarriedByTheClaimFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := postgrestest.Open(t)
	// Queueing b fails once, as a deadlock's victim would.
	for _, q := range []string{
		`CREATE SEQUENCE fail_once`,
		`CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.task_id = 'b' AND NEW.state = 'queued' AND nextval('fail_once') = 1 THEN
				RAISE EXCEPTION 'injected: queueing b fails';
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER fail_once BEFORE UPDATE ON task_instance FOR EACH ROW EXECUTE FUNCTION fail_once()`,
	} {
		if _, err := pg.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	svc := service.New(service.Config{Store: pg, Clock: clocktest.New(t0)})
	syncDAG(t, pg, core.DAG{DagID: "q", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop", DependsOn: []string{"a"}},
	}})
	run := runningRun(t, pg, svc, "q")
	a := startTry(t, pg, run, "a")
	sched := pg.Subscribe(ctx, store.ChannelTasks)
	res, err := svc.EndTry(ctx, a, service.TryEnd{State: core.TISuccess,
		Claim: &store.TaskInstanceClaimParams{WorkerID: "w1", Queues: []string{core.DefaultQueue}, Limit: 1, Start: true, Hostname: "h1", PID: 42}})
	if err != nil || res.State != core.TISuccess {
		t.Fatalf("end = %+v, %v; want success", res, err)
	}
	if len(res.Next) != 0 {
		t.Errorf("the end claimed %d tries, want none (b is the scheduler's)", len(res.Next))
	}
	if got := states(t, pg, run); got["a"] != core.TISuccess || got["b"] != core.TINone {
		t.Errorf("a %s, b %s; want a success and b none, left to the scheduler", got["a"], got["b"])
	}
	if !heard(sched) {
		t.Error("the scheduler was not woken")
	}
}
