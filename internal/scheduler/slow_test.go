package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
)

// heldDagList is a store whose DAG listings wait until release is closed:
// a pass held by the database (a lock another session holds).
type heldDagList struct {
	store.Store
	release <-chan struct{}
}

func (s heldDagList) DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error) {
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.DagList(ctx, p)
}

// Passes held by the database are said while they go on, again at each
// SlowWakeUp, and once they end: a scheduler that schedules nothing
// because a lock holds it is not silent.
func TestSlowPassesAreSaid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("held", 1, 1))
	release := make(chan struct{})
	out := &syncbuf.Buffer{}
	s := &scheduler.Scheduler{Store: heldDagList{Store: h.st, release: release}, Clock: core.SystemClock{},
		Logger: slog.New(slog.NewTextHandler(out, nil)),
		Config: scheduler.Config{PollInterval: time.Hour, StaleCheckInterval: time.Hour, WorkerCheckInterval: time.Hour,
			SlowWakeUp: 20 * time.Millisecond}}
	ctx, cancel := context.WithCancel(h.ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = s.Start(ctx) }()
	defer func() { cancel(); <-stopped }() // no pass runs on as the store closes
	const still, ended = "scheduler passes still running", "slow scheduler passes ended"
	waitFor(t, nil, func() bool { return strings.Count(out.String(), still) >= 2 })
	if n := strings.Count(out.String(), ended); n != 0 {
		t.Fatalf("%q said %d times while the pass is held, want none", ended, n)
	}
	close(release)
	waitFor(t, nil, func() bool { return strings.Contains(out.String(), ended) })
}

// failingDagList is a store whose next DAG listings fail as they do while
// the database restarts.
type failingDagList struct {
	store.Store
	failures *atomic.Int32
}

func (s failingDagList) DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error) {
	if s.failures.Add(-1) >= 0 {
		return nil, fmt.Errorf("list dags: %w: connection refused", core.ErrUnavailable)
	}
	return s.Store.DagList(ctx, p)
}

// Failed passes are each said, counted, and once one succeeds again the
// scheduler says so: an operator sees from the log alone that it
// recovered after the database came back.
func TestRecoveryAfterFailedPassesIsSaid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("flaky", 1, 1))
	failures := &atomic.Int32{}
	failures.Store(2)
	out := &syncbuf.Buffer{}
	s := &scheduler.Scheduler{Store: failingDagList{Store: h.st, failures: failures}, Clock: core.SystemClock{},
		Logger: slog.New(slog.NewTextHandler(out, nil)),
		Config: scheduler.Config{PollInterval: 10 * time.Millisecond, StaleCheckInterval: time.Hour, WorkerCheckInterval: time.Hour}}
	ctx, cancel := context.WithCancel(h.ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = s.Start(ctx) }()
	defer func() { cancel(); <-stopped }()
	waitFor(t, nil, func() bool { return strings.Contains(out.String(), "scheduler passes succeed again") })
	log := out.String()
	if !strings.Contains(log, "failed_in_a_row=2") || !strings.Contains(log, "after_failures=2") ||
		strings.Count(log, "scheduler passes succeed again") != 1 {
		t.Errorf("log = %s\nwant two failures counted, then one line saying the passes succeed again", log)
	}
}
