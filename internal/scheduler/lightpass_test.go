package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
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

// A try's end waits for its light pass only while the workers claim from a
// backlog of queued work (ADR 0034): not after the pass that queued 100
// (nobody claimed yet), within the gap once workers claimed some and 90
// still wait, and not once fewer than BusyBacklog wait; a queue no worker
// claims from (gpu) does not count.
func TestLightPassesWaitOnlyBehindABacklog(t *testing.T) {
	t.Parallel()
	gpu := wideDAG("gpu", 100, 100)
	for i := range gpu.Tasks {
		gpu.Tasks[i].Queue, gpu.Tasks[i].Pool = "gpu", "gpu"
	}
	h := newHarness(t, wideDAG("wide", 100, 100), gpu)
	slots := 100
	if _, err := h.svc(h.clk).SavePool(h.ctx, core.System, service.PoolChange{Name: "gpu", Slots: &slots, Mode: service.PoolCreate}); err != nil {
		t.Fatal(err)
	}
	h.trigger("gpu")
	h.step()
	h.step()
	if scheduler.Busy(h.s) {
		t.Error("100 queued that no worker claims: busy, want not")
	}
	h.trigger("wide")
	h.step()
	if scheduler.Busy(h.s) {
		t.Error("right after queueing 100: busy, want not (nobody claimed yet)")
	}
	h.claim("w", 10)
	h.step()
	if !scheduler.Busy(h.s) {
		t.Error("workers claimed 10, 90 wait: not busy, want busy")
	}
	if d := scheduler.LightDelay(h.s); d > scheduler.LightPassGap {
		t.Errorf("a light pass waits %v, want at most %v", d, scheduler.LightPassGap)
	}
	h.claim("w", 90-scheduler.BusyBacklog+1)
	h.step()
	if scheduler.Busy(h.s) || scheduler.LightDelay(h.s) != 0 {
		t.Errorf("%d wait: busy %v, a light pass waits %v; want neither", scheduler.BusyBacklog-1, scheduler.Busy(h.s), scheduler.LightDelay(h.s))
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
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	s := &scheduler.Scheduler{Store: h.st, Clock: core.SystemClock{},
		// Only notifications wake the loop within the test.
		Config: scheduler.Config{PollInterval: time.Hour, StaleCheckInterval: time.Hour, WorkerCheckInterval: time.Hour},
		OnLoop: func(took time.Duration, err error) {
			if err != nil && ctx.Err() == nil { // a wake-up cut short by the test's end is no failure
				t.Errorf("wake-up failed: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			wakes = append(wakes, [2]time.Time{now.Add(-took), now})
		}}
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
	end := func() {
		for _, ti := range h.claim("w", 1) {
			h.finish(ti, succeed)
		}
		if err := h.st.Notify(h.ctx, store.ChannelTasks); err != nil {
			t.Fatal(err)
		}
	}
	end() // workers claim from the backlog: the pass it wakes sees it
	waitFor(t, nil, func() bool { return active() == 101 })
	// Wait out the wake-ups so far (the start's whole passes among them).
	quiet := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(wakes) > 0 && time.Since(wakes[len(wakes)-1][1]) > 2*scheduler.LightPassGap
	}
	waitFor(t, nil, quiet)
	mu.Lock()
	from := len(wakes)
	mu.Unlock()
	const ends = 12
	for range ends {
		end()
	}
	waitFor(t, nil, func() bool { return active() == 101+ends })

	mu.Lock()
	defer mu.Unlock()
	if len(wakes) == from {
		t.Fatal("no wake-up after the ends")
	}
	for i := from + 1; i < len(wakes); i++ {
		// The gap runs from when the last wake-up's passes ended, a hair
		// before the loop heard of it (OnLoop): half the gap is the
		// slack of a busy machine; without the gap they are µs apart.
		if gap := wakes[i][0].Sub(wakes[i-1][1]); gap < scheduler.LightPassGap/2 {
			t.Errorf("wake-up %d began %v after the one before ended, want at least %v", i, gap, scheduler.LightPassGap)
		}
	}
}
