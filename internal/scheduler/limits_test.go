package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// wide returns a DAG of n independent tasks with the given task settings.
func wide(id string, n int, task core.Task) core.DAG {
	d := core.DAG{DagID: id}
	for i := range n {
		t := task
		t.TaskID = fmt.Sprintf("t%d", i)
		d.Tasks = append(d.Tasks, t)
	}
	return d
}

// active counts the run's queued and running instances per pool.
func (h *harness) active(run *core.DagRun) (n int, slots map[string]int) {
	slots = map[string]int{}
	for _, ti := range h.tis(run) {
		if ti.State == core.TIQueued || ti.State == core.TIRunning {
			n++
			slots[ti.Pool] += ti.PoolSlots
		}
	}
	return n, slots
}

func TestPoolSlotsAreNeverExceeded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wide("pooled", 7, core.Task{Pool: "p", PoolSlots: 2}))
	if err := h.st.PoolUpsert(h.ctx, &core.Pool{Name: "p", Slots: 5}); err != nil {
		t.Fatal(err)
	}
	run := h.trigger("pooled")
	maxSeen := 0
	for range 20 {
		h.step()
		_, slots := h.active(run)
		if slots["p"] > 5 {
			t.Fatalf("pool p holds %d slots, it has 5", slots["p"])
		}
		maxSeen = max(maxSeen, slots["p"])
		// The worker finishes one try per round, so the pool stays full.
		if tis := h.claim("w", 1); len(tis) == 1 {
			h.finish(tis[0], succeed)
		}
		if h.run(run).State.Terminal() {
			break
		}
	}
	if got := h.run(run).State; got != core.RunSuccess {
		t.Fatalf("run = %s, want success", got)
	}
	if maxSeen != 4 {
		t.Errorf("pool p peaked at %d slots, want 4 (two 2-slot tasks fit in 5)", maxSeen)
	}
}

func TestUnknownPoolWaits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "typo", Tasks: []core.Task{{TaskID: "a", Pool: "nope"}, {TaskID: "b"}}})
	run := h.trigger("typo")
	h.step()
	want := map[string]string{"a": "scheduled", "b": "queued"}
	if got := h.states(run); got["a"] != want["a"] || got["b"] != want["b"] {
		t.Fatalf("states = %v, want %v", got, want)
	}
	if err := h.st.PoolUpsert(h.ctx, &core.Pool{Name: "nope", Slots: 1}); err != nil {
		t.Fatal(err)
	}
	if _, state := h.drive(run, succeed); state != core.RunSuccess {
		t.Errorf("run = %s after creating the pool, want success", state)
	}
}

func TestMaxActiveTasksAcrossRuns(t *testing.T) {
	t.Parallel()
	spec := wide("busy", 3, core.Task{})
	spec.MaxActiveTasks = 4
	h := newHarness(t, spec)
	r1, r2 := h.trigger("busy"), h.trigger("busy")
	h.step()
	n1, _ := h.active(r1)
	n2, _ := h.active(r2)
	if n1+n2 != 4 {
		t.Fatalf("queued across runs = %d, want max_active_tasks 4", n1+n2)
	}
	for _, r := range []*core.DagRun{r1, r2} {
		if _, state := h.drive(r, succeed); state != core.RunSuccess {
			t.Errorf("run %s = %s, want success", r.RunID, state)
		}
	}
}

func TestMaxActiveRuns(t *testing.T) {
	t.Parallel()
	spec := core.DAG{DagID: "one_at_a_time", MaxActiveRuns: 1, Tasks: []core.Task{{TaskID: "a"}}}
	h := newHarness(t, spec)
	r1, r2, r3 := h.trigger(spec.DagID), h.trigger(spec.DagID), h.trigger(spec.DagID)
	order := []*core.DagRun{r1, r2, r3}
	for i := range order {
		h.step()
		for j, other := range order {
			want := core.RunQueued
			switch {
			case j < i:
				want = core.RunSuccess
			case j == i:
				want = core.RunRunning
			}
			if got := h.run(other).State; got != want {
				t.Fatalf("after finishing %d runs, run %d = %s, want %s", i, j+1, got, want)
			}
		}
		if ran := h.work(succeed); len(ran) != 1 {
			t.Fatalf("round %d ran %v, want only run %d's task", i, ran, i+1)
		}
	}
	h.step()
	counts, err := h.st.DagRunCountByState(h.ctx, spec.DagID)
	if err != nil || counts[core.RunSuccess] != 3 {
		t.Errorf("run counts = %v (err %v), want 3 successes", counts, err)
	}
}

func TestPausedDagDoesNotProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "paused", Tasks: []core.Task{{TaskID: "a"}}})
	run := h.trigger("paused")
	if err := h.st.DagSetPaused(h.ctx, "paused", true); err != nil {
		t.Fatal(err)
	}
	h.step()
	if got := h.run(run).State; got != core.RunQueued {
		t.Fatalf("run of a paused DAG = %s, want queued", got)
	}
	if err := h.st.DagSetPaused(h.ctx, "paused", false); err != nil {
		t.Fatal(err)
	}
	if _, state := h.drive(run, succeed); state != core.RunSuccess {
		t.Errorf("run = %s after unpausing, want success", state)
	}
}

// OnlyDagID (weir dags test): the chosen DAG's run progresses although the
// DAG is paused; other DAGs get no scheduled runs and their runs stay put.
func TestOnlyDagIDConfinesTheScheduler(t *testing.T) {
	t.Parallel()
	h := newHarness(t, daily("other", true, 0), core.DAG{DagID: "tested", Tasks: []core.Task{{TaskID: "a"}}})
	h.s.Config.OnlyDagID = "tested"
	if err := h.st.DagSetPaused(h.ctx, "tested", true); err != nil {
		t.Fatal(err)
	}
	otherRun := h.trigger("other")
	run := h.trigger("tested")
	if _, state := h.drive(run, succeed); state != core.RunSuccess {
		t.Errorf("tested run = %s, want success", state)
	}
	if got := h.run(otherRun).State; got != core.RunQueued {
		t.Errorf("other DAG's run = %s, want still queued", got)
	}
	if ids := h.runIDs("other"); len(ids) != 1 {
		t.Errorf("other DAG has runs %v, want only the manual one (no scheduled runs)", ids)
	}
}

// A confined scheduler (weir dags test) fails over the tries of its DAG
// alone (a killed test's, which would hold its DAG's slots for ever): another
// DAG's are the deployment scheduler's to judge.
func TestOnlyDagIDFailsOverItsDAGsTriesAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "other", Tasks: []core.Task{{TaskID: "a"}}}, core.DAG{DagID: "tested", Tasks: []core.Task{{TaskID: "a"}}})
	theirs, mine := h.trigger("other"), h.trigger("tested")
	h.step()
	if tis := h.claim("w1", 2); len(tis) != 2 { // w1 starts both tries, then dies
		t.Fatalf("claimed %d, want 2", len(tis))
	}
	h.s = &scheduler.Scheduler{Store: h.st, Clock: h.clk, Config: scheduler.Config{HeartbeatTimeout: time.Minute, OnlyDagID: "tested"}}
	for range 8 { // two minutes of passes, the api-server up throughout
		h.clk.Advance(15 * time.Second)
		h.step()
	}
	if got := h.states(theirs)["a"]; got != "running" {
		t.Errorf("other's try = %s after its worker's heartbeat timeout under a scheduler confined to another DAG, want running (untouched)", got)
	}
	if got := h.states(mine)["a"]; got != "failed" {
		t.Errorf("tested's try = %s after its worker's heartbeat timeout under a scheduler confined to its DAG, want failed over (failed)", got)
	}
}

// A pool resized while the scheduler runs takes effect at once: the
// change wakes a whole pass, which reads the pools again (the light passes
// of tries' ends use what the last whole pass read).
func TestPoolResizeTakesEffectAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, wide("pooled", 3, core.Task{Pool: "p"}))
	svc := h.svc(core.SystemClock{})
	slots := 1
	if _, err := svc.SavePool(h.ctx, core.System, service.PoolChange{Name: "p", Slots: &slots, Mode: service.PoolCreate}); err != nil {
		t.Fatal(err)
	}
	// A long poll interval: only a notification can wake the loop in time.
	s := &scheduler.Scheduler{Store: h.st, Clock: core.SystemClock{}, Config: scheduler.Config{PollInterval: time.Hour}}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	go func() { _ = s.Start(ctx) }()
	queued := h.st.Subscribe(ctx, store.ChannelQueued)
	run := h.trigger("pooled")
	waitFor(t, queued, func() bool { n, _ := h.active(run); return n == 1 })

	slots = 3
	if _, err := svc.SavePool(h.ctx, core.System, service.PoolChange{Name: "p", Slots: &slots, Mode: service.PoolUpdate}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, queued, func() bool { n, _ := h.active(run); return n == 3 })
}
