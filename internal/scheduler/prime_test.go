package scheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/store"
)

// primedLoop is a scheduler that only notifications wake within a test,
// counting its wake-ups.
func primedLoop(h *harness, wakes *atomic.Int32) *scheduler.Scheduler {
	return &scheduler.Scheduler{Store: h.st, Clock: core.SystemClock{},
		Config: scheduler.Config{PollInterval: time.Hour, StaleCheckInterval: time.Hour, WorkerCheckInterval: time.Hour},
		OnLoop: func(time.Duration, error) { wakes.Add(1) }}
}

// The Start that follows Prime loses no notification sent between the
// two: a run triggered then is queued at once, though the poll interval is
// an hour.
func TestPrimedStartMissesNothingSinceThePrime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("second", 1, 1))
	var wakes atomic.Int32
	s := primedLoop(h, &wakes)
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	if err := s.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	second := h.trigger("second")
	go func() { _ = s.Start(ctx) }()
	waitFor(t, nil, func() bool { return h.states(second)["t000"] == string(core.TIQueued) })
}

// Prime queues what the first wake-up of Start would, and the Start that
// follows does not pass again at once: its first wake-up is the next
// notification's.
func TestPrimedStartWaitsForWork(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("first", 1, 1), wideDAG("later", 1, 1))
	var wakes atomic.Int32
	s := primedLoop(h, &wakes)
	first := h.trigger("first")
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	if err := s.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.states(first)["t000"]; got != string(core.TIQueued) {
		t.Fatalf("first's try after Prime: %s, want queued", got)
	}
	go func() { _ = s.Start(ctx) }()
	time.Sleep(50 * time.Millisecond)
	if n := wakes.Load(); n != 0 {
		t.Fatalf("a primed loop woke %d times with nothing new to do, want none", n)
	}
	run := h.trigger("later")
	waitFor(t, nil, func() bool { return h.states(run)["t000"] == string(core.TIQueued) })
}

// failingFirstList is a store whose first DAG listing fails.
type failingFirstList struct {
	store.Store
	failed *atomic.Bool
}

func (s failingFirstList) DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error) {
	if s.failed.CompareAndSwap(false, true) {
		return nil, errors.New("database is locked")
	}
	return s.Store.DagList(ctx, p)
}

// A Prime whose pass fails says so and leaves Start to pass at once, as
// an unprimed loop does: the run triggered before it is queued without a
// notification, though the poll interval is an hour.
func TestAFailedPrimeLeavesStartToPass(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("first", 1, 1))
	var wakes atomic.Int32
	s := primedLoop(h, &wakes)
	s.Store = failingFirstList{Store: h.st, failed: new(atomic.Bool)}
	run := h.trigger("first")
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	if err := s.Prime(ctx); err == nil {
		t.Fatal("Prime with a failing pass returned no error")
	}
	go func() { _ = s.Start(ctx) }()
	waitFor(t, nil, func() bool { return h.states(run)["t000"] == string(core.TIQueued) })
}
