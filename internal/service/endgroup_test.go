package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// countingStore counts the transactions begun through it.
type countingStore struct {
	store.Store
	txs atomic.Int32
}

func (c *countingStore) WithTx(ctx context.Context, fn func(tx store.Store) error) error {
	c.txs.Add(1)
	return c.Store.WithTx(ctx, fn)
}

// wideRun starts a running run of four independent tasks and starts a try
// of each.
func wideRun(t *testing.T, st store.Store) map[string]*core.TaskInstance {
	t.Helper()
	ctx := context.Background()
	syncDAG(t, st, core.DAG{DagID: "wide", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop"},
		{TaskID: "c", Operator: "noop"}, {TaskID: "d", Operator: "noop"},
	}})
	run, err := newSvc(st, clocktest.New(t0)).TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "wide"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunRunning, Now: t0}); err != nil {
		t.Fatal(err)
	}
	tis := map[string]*core.TaskInstance{}
	for _, task := range []string{"a", "b", "c", "d"} {
		tis[task] = startTry(t, st, run, task)
	}
	return tis
}

// A group of try ends commits once; when one of them fails (a conflict, a
// panic), the group is rolled back and each is recorded alone, so the
// failure is that end's only. An end whose caller gave up fails before the
// group; a transaction that cannot begin fails every end.
func TestAGroupOfEndsFailsOnlyTheFailingEnd(t *testing.T) {
	t.Parallel()
	forEachEngine(t, testAGroupOfEndsFailsOnlyTheFailingEnd)
}

// forEachEngine runs test on SQLite and on PostgreSQL, where try ends
// share transactions too (GroupTryEnds).
func forEachEngine(t *testing.T, test func(t *testing.T, open func(testing.TB) store.Store)) {
	for name, open := range map[string]func(testing.TB) store.Store{
		"sqlite":   func(t testing.TB) store.Store { return sqlitetest.Open(t) },
		"postgres": func(t testing.TB) store.Store { return postgrestest.Open(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, open)
		})
	}
}

func testAGroupOfEndsFailsOnlyTheFailingEnd(t *testing.T, open func(testing.TB) store.Store) {
	ctx := context.Background()
	st := &countingStore{Store: open(t)}
	tis := wideRun(t, st.Store)
	svc := service.New(service.Config{Store: st, Clock: clocktest.New(t0), GroupTryEnds: true})
	finish := func(task string, from core.TIState) service.GroupedEnd {
		return service.GroupedEnd{Ctx: ctx, Record: func(tx store.Store) error {
			return tx.TaskInstanceFinish(ctx, &store.TaskInstanceFinishParams{ID: tis[task].ID, State: core.TISuccess, From: from, Now: t0})
		}}
	}
	panics := service.GroupedEnd{Ctx: ctx, Record: func(store.Store) error { panic("boom") }}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	abandoned := finish("d", "")
	abandoned.Ctx = gone

	if errs := svc.CommitEndGroup(ctx, finish("a", ""), abandoned); errs[0] != nil || !errors.Is(errs[1], context.Canceled) || st.txs.Load() != 1 {
		t.Fatalf("a group with an abandoned end: errors %v in %d transactions, want a's none and d's cancellation in one", errs, st.txs.Load())
	}
	st.txs.Store(0)
	// d is not up_for_retry: its end conflicts.
	errs := svc.CommitEndGroup(ctx, finish("b", ""), finish("d", core.TIUpForRetry), panics, finish("c", ""))
	if errs[0] != nil || !errors.Is(errs[1], core.ErrConflict) || errs[2] == nil || !strings.Contains(errs[2].Error(), "panicked: boom") || errs[3] != nil {
		t.Errorf("errors = %v, want b's and c's none, d's conflict, the panic's", errs)
	}
	if got := st.txs.Load(); got != 5 {
		t.Errorf("%d transactions, want 5 (the group's, then each end's)", got)
	}
	for task, want := range map[string]core.TIState{"a": core.TISuccess, "b": core.TISuccess, "c": core.TISuccess, "d": core.TIRunning} {
		if got := listTIs(t, st, tis[task].DagRunID)[task].State; got != want {
			t.Errorf("%s is %s, want %s", task, got, want)
		}
	}
	down := service.New(service.Config{Store: beginFails{st.Store}, Clock: clocktest.New(t0), GroupTryEnds: true})
	for i, err := range down.CommitEndGroup(ctx, finish("d", ""), finish("d", "")) {
		if err == nil || !strings.Contains(err.Error(), "database is down") {
			t.Errorf("end %d when no transaction begins: %v", i, err)
		}
	}
}

// beginFails is a store whose transactions cannot begin.
type beginFails struct{ store.Store }

func (beginFails) WithTx(context.Context, func(tx store.Store) error) error {
	return errors.New("begin transaction: database is down")
}

// gatedStore holds its first transaction until gate is closed.
type gatedStore struct {
	countingStore
	gate chan struct{}
}

func (g *gatedStore) WithTx(ctx context.Context, fn func(tx store.Store) error) error {
	if g.txs.Load() == 0 {
		<-g.gate
	}
	return g.countingStore.WithTx(ctx, fn)
}

// Try ends that wait for the writer while another holds it share one
// transaction, each with its own outcome.
func TestConcurrentEndsShareACommit(t *testing.T) {
	t.Parallel()
	forEachEngine(t, testConcurrentEndsShareACommit)
}

func testConcurrentEndsShareACommit(t *testing.T, open func(testing.TB) store.Store) {
	ctx := context.Background()
	st := &gatedStore{countingStore: countingStore{Store: open(t)}, gate: make(chan struct{})}
	tis := wideRun(t, st.Store)
	svc := service.New(service.Config{Store: st, Clock: clocktest.New(t0), GroupTryEnds: true})
	var wg sync.WaitGroup
	results := map[string]error{}
	var mu sync.Mutex
	for task, ti := range tis {
		wg.Go(func() {
			_, err := svc.FinishTry(ctx, ti, core.TISuccess)
			mu.Lock()
			results[task] = err
			mu.Unlock()
		})
	}
	for deadline := time.Now().Add(10 * time.Second); svc.PendingEnds() < len(tis); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // the leader's own end waits with the others
			t.Fatalf("%d ends wait for the writer, want %d", svc.PendingEnds(), len(tis))
		}
	}
	close(st.gate)
	wg.Wait()
	for task, err := range results {
		if err != nil {
			t.Errorf("end of %s: %v", task, err)
		}
	}
	if got := st.txs.Load(); got != 1 {
		t.Errorf("%d transactions for %d concurrent ends, want 1", got, len(tis))
	}
	for task, ti := range listTIs(t, st, tis["a"].DagRunID) {
		if ti.State != core.TISuccess {
			t.Errorf("%s is %s, want success", task, ti.State)
		}
	}
}

// TestGroupTryEndsRule: SQLite groups unless told never; PostgreSQL groups
// when told always, or on auto when the database answers within
// NearRoundTrip — the round trip measured only then.
func TestGroupTryEndsRule(t *testing.T) {
	near, far := service.NearRoundTrip, service.NearRoundTrip+time.Microsecond
	for name, c := range map[string]struct {
		mode, dialect string
		rt            time.Duration
		rtErr         error
		want, probed  bool
		noProbe       bool // a process other than an api-server
		why           string
	}{
		"sqlite auto":         {mode: "auto", dialect: "sqlite", want: true, why: "one writer"},
		"sqlite never":        {mode: "never", dialect: "sqlite", want: false, why: "= never"},
		"sqlite always":       {mode: "always", dialect: "sqlite", want: true, why: "= always"},
		"postgres always":     {mode: "always", dialect: "postgres", want: true, why: "= always"},
		"postgres never":      {mode: "never", dialect: "postgres", want: false, why: "= never"},
		"postgres near":       {mode: "auto", dialect: "postgres", rt: near, want: true, probed: true, why: "within 100µs"},
		"postgres far":        {mode: "auto", dialect: "postgres", rt: far, want: false, probed: true, why: "beyond 100µs"},
		"postgres unmeasured": {mode: "auto", dialect: "postgres", rtErr: errors.New("connection refused"), probed: true, want: false, why: "connection refused"},
		"postgres, no probe":  {mode: "auto", dialect: "postgres", noProbe: true, want: false, why: "not measured"},
		"sqlite, no probe":    {mode: "auto", dialect: "sqlite", noProbe: true, want: true, why: "one writer"},
		"always, no probe":    {mode: "always", dialect: "postgres", noProbe: true, want: true, why: "= always"},
	} {
		t.Run(name, func(t *testing.T) {
			probed := false
			probe := func() (time.Duration, error) { probed = true; return c.rt, c.rtErr }
			if c.noProbe {
				probe = nil
			}
			got, why := service.GroupTryEnds(c.mode, c.dialect, probe)
			if got != c.want || probed != c.probed || !strings.Contains(why, c.why) {
				t.Errorf("GroupTryEnds = %v (%q), probed %v; want %v (…%s…), probed %v", got, why, probed, c.want, c.why, c.probed)
			}
		})
	}
}
