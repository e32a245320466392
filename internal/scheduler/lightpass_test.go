package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/store"
)

// wideDAG is a DAG of n independent tasks, at most active of them queued
// or running at once.
func wideDAG(id string, n, active int) core.DAG {
	d := core.DAG{DagID: id, MaxActiveTasks: active}
	for i := range n {
		d.Tasks = append(d.Tasks, core.Task{TaskID: fmt.Sprintf("t%03d", i)})
	}
	return d
}

// A try's end waits for its light pass only while the workers have a
// backlog of queued work (ADR 0034): after a pass that left 100 instances
// queued and unclaimed, within the gap; once workers have claimed enough
// of them that fewer than BusyBacklog wait, not at all.
func TestLightPassesWaitOnlyBehindABacklog(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("wide", 100, 100))
	if d := scheduler.LightDelay(h.s); d != 0 {
		t.Errorf("before any pass a light pass waits %v, want 0", d)
	}
	h.trigger("wide")
	h.step()
	if d := scheduler.LightDelay(h.s); d <= 0 || d > scheduler.LightPassGap {
		t.Errorf("with 100 queued and unclaimed a light pass waits %v, want (0, %v]", d, scheduler.LightPassGap)
	}
	h.claim("w", 100-scheduler.BusyBacklog+1)
	h.step()
	if d := scheduler.LightDelay(h.s); d != 0 {
		t.Errorf("with %d unclaimed a light pass waits %v, want 0", scheduler.BusyBacklog-1, d)
	}
}

// Behind a backlog, the loop's light wake-ups start at least LightPassGap
// after the last one ended, however many ends ask for them, and none is
// lost: the slots of every end are refilled.
func TestStartSpacesLightPassesAndLosesNone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wideDAG("wide", 200, 100))
	var (
		mu    sync.Mutex
		wakes [][2]time.Time // began, ended
	)
	s := &scheduler.Scheduler{Store: h.st, Clock: core.SystemClock{},
		// Only notifications wake the loop within the test.
		Config: scheduler.Config{PollInterval: time.Hour, StaleCheckInterval: time.Hour, WorkerCheckInterval: time.Hour},
		OnLoop: func(took time.Duration, err error) {
			if err != nil {
				t.Errorf("wake-up failed: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			wakes = append(wakes, [2]time.Time{now.Add(-took), now})
		}}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	go func() { _ = s.Start(ctx) }()

	run := h.trigger("wide")
	active := func() int {
		n := 0
		for _, st := range h.states(run) {
			if st != string(core.TIScheduled) && st != string(core.TINone) {
				n++
			}
		}
		return n
	}
	waitFor(t, nil, func() bool { return active() == 100 })
	mu.Lock()
	from := len(wakes)
	mu.Unlock()
	const ends = 12
	for range ends {
		for _, ti := range h.claim("w", 1) {
			h.finish(ti, succeed)
		}
		if err := h.st.Notify(h.ctx, store.ChannelTasks); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, nil, func() bool { return active() == 100+ends })

	mu.Lock()
	defer mu.Unlock()
	if len(wakes) == from {
		t.Fatal("no wake-up after the ends")
	}
	for i := max(from, 1); i < len(wakes); i++ {
		// The gap runs from when the last wake-up's passes ended, a hair
		// before the loop heard of it (OnLoop).
		if gap := wakes[i][0].Sub(wakes[i-1][1]); gap < scheduler.LightPassGap-2*time.Millisecond {
			t.Errorf("wake-up %d began %v after the one before ended, want at least %v", i, gap, scheduler.LightPassGap)
		}
	}
}
