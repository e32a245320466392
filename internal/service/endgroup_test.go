package service_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
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

// A group of try ends commits once; when one of them fails, the group is
// rolled back and each is recorded alone, so the failure is that end's
// only.
func TestAGroupOfEndsFailsOnlyTheFailingEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &countingStore{Store: sqlitetest.Open(t)}
	tis := wideRun(t, st.Store)
	svc := service.New(service.Config{Store: st, Clock: clocktest.New(t0), GroupTryEnds: true})
	finish := func(task string, from core.TIState) func(tx store.Store) error {
		return func(tx store.Store) error {
			return tx.TaskInstanceFinish(ctx, &store.TaskInstanceFinishParams{ID: tis[task].ID, State: core.TISuccess, From: from, Now: t0})
		}
	}

	if errs := svc.CommitEndGroup(ctx, finish("a", ""), finish("b", "")); errors.Join(errs...) != nil || st.txs.Load() != 1 {
		t.Fatalf("a group that succeeds: errors %v in %d transactions, want none in one", errs, st.txs.Load())
	}
	st.txs.Store(0)
	// d is not up_for_retry: its end conflicts.
	errs := svc.CommitEndGroup(ctx, finish("c", ""), finish("d", core.TIUpForRetry))
	if errs[0] != nil || !errors.Is(errs[1], core.ErrConflict) {
		t.Errorf("errors = %v, want c's none and d's conflict", errs)
	}
	if got := st.txs.Load(); got != 3 {
		t.Errorf("%d transactions, want 3 (the group's, then each end's)", got)
	}
	for task, want := range map[string]core.TIState{"a": core.TISuccess, "b": core.TISuccess, "c": core.TISuccess, "d": core.TIRunning} {
		if got := listTIs(t, st, tis[task].DagRunID)[task].State; got != want {
			t.Errorf("%s is %s, want %s", task, got, want)
		}
	}
}

// Concurrent ends through EndTry with grouping on each get their own
// outcome.
func TestConcurrentGroupedEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	tis := wideRun(t, st)
	svc := service.New(service.Config{Store: st, Clock: clocktest.New(t0), GroupTryEnds: true})
	stale := *tis["d"]
	if _, err := svc.FinishTry(ctx, &stale, core.TIFailed); err != nil {
		t.Fatal(err)
	}
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
	wg.Wait()
	for task, err := range results {
		if wantConflict := task == "d"; wantConflict != errors.Is(err, core.ErrConflict) || (!wantConflict && err != nil) {
			t.Errorf("end of %s: %v", task, err)
		}
	}
	got := listTIs(t, st, tis["a"].DagRunID)
	for task, want := range map[string]core.TIState{"a": core.TISuccess, "b": core.TISuccess, "c": core.TISuccess, "d": core.TIFailed} {
		if got[task].State != want {
			t.Errorf("%s is %s, want %s", task, got[task].State, want)
		}
	}
}
