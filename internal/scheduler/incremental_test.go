package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

// The scheduler keeps each running run's instances between passes and reads
// only what changed (runview.go). These tests change instances behind its
// back, as the API, a worker or another scheduler would, with the clock
// moving on between passes so that its reads are incremental.

// joinDAG is a and b, both upstream of c.
func joinDAG(id string) core.DAG {
	return core.DAG{DagID: id, Tasks: []core.Task{
		{TaskID: "a"}, {TaskID: "b"}, {TaskID: "c", DependsOn: []string{"a", "b"}},
	}}
}

// startJoin runs a to success and leaves b running, with a pass in between
// so the scheduler's view holds both; it returns b's running try.
func startJoin(h *harness) core.TaskInstance {
	h.t.Helper()
	h.step()
	var b core.TaskInstance
	for _, ti := range h.claim("w1", 10) {
		if ti.TaskID == "a" {
			h.finish(ti, succeed)
		} else {
			b = ti
		}
	}
	h.clk.Advance(time.Second)
	h.step()
	h.clk.Advance(time.Second)
	return b
}

func (h *harness) ti(run *core.DagRun, k string) core.TaskInstance {
	h.t.Helper()
	for _, ti := range h.tis(run) {
		if key(ti) == k {
			return ti
		}
	}
	h.t.Fatalf("no task instance %s in %v", k, h.states(run))
	return core.TaskInstance{}
}

func TestClearBehindTheSchedulersBackIsPickedUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, joinDAG("clear"))
	run := h.trigger("clear")
	b := startJoin(h)
	if _, err := h.svc(h.clk).Clear(h.ctx, core.System, service.ClearParams{DagID: run.DagID, RunID: run.RunID, TaskIDs: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Second)
	h.finish(b, succeed)
	h.step()
	if got, want := h.states(run), map[string]string{"a": "queued", "b": "success", "c": "none"}; !cmp.Equal(want, got) {
		t.Fatalf("after clearing a and finishing b: %v, want %v (c waits for a's new try)", got, want)
	}
	rounds, state := h.drive(run, succeed)
	if state != core.RunSuccess || !cmp.Equal([][]string{{"a"}, {"c"}}, rounds) {
		t.Errorf("run = %s, rounds %v; want success running a again, then c", state, rounds)
	}
	if a := h.ti(run, "a"); a.TryNumber != 2 {
		t.Errorf("a's try = %d, want 2", a.TryNumber)
	}
}

func TestChangeTheIncrementalReadMissesIsNeverActedOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, joinDAG("lag"))
	run := h.trigger("lag")
	b := startJoin(h)
	// An api-server whose clock lags an hour marks a failed: its updated_at
	// is far behind what the scheduler's incremental reads look at.
	lagging := clocktest.New(h.clk.Now().Add(-time.Hour))
	if _, err := h.svc(lagging).MarkTaskInstance(h.ctx, core.System, keyOf(h.ti(run, "a")), core.TIFailed); err != nil {
		t.Fatal(err)
	}
	h.finish(b, succeed)
	h.step() // the view says a and b succeeded; the plan must be checked first
	if got := h.states(run)["c"]; got != "upstream_failed" {
		t.Fatalf("c = %s, want upstream_failed (a was marked failed)", got)
	}
	if r := h.run(run); r.State != core.RunFailed {
		t.Errorf("run = %s, want failed", r.State)
	}
}

func TestMissedChangeIsPickedUpByTheNextFullLoad(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "late", Tasks: []core.Task{{TaskID: "a"}, {TaskID: "c", DependsOn: []string{"a"}}}})
	run := h.trigger("late")
	h.step()
	h.claim("w1", 10)
	h.clk.Advance(time.Second)
	h.step()
	lagging := clocktest.New(h.clk.Now().Add(-time.Hour))
	if _, err := h.svc(lagging).MarkTaskInstance(h.ctx, core.System, keyOf(h.ti(run, "a")), core.TISuccess); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(10 * time.Second) // past the bound on how long a view is trusted
	h.step()
	if got := h.states(run)["c"]; got != "queued" {
		t.Fatalf("c = %s, want queued once a's success is seen", got)
	}
}

func TestExpansionByAnotherSchedulerIsPickedUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, mappedDAG("other", map[string]core.ExpandSource{"x": {Values: []any{1, 2, 3}}}))
	other := &scheduler.Scheduler{Store: h.st, Clock: h.clk}
	run := h.trigger("other")
	h.step()
	h.work(succeed) // gen
	h.clk.Advance(time.Second)
	if err := other.RunOnce(h.ctx); err != nil { // expands m
		t.Fatal(err)
	}
	h.clk.Advance(time.Second)
	rounds, state := h.drive(run, succeed)
	if state != core.RunSuccess || !cmp.Equal([][]string{{"m[0]", "m[1]", "m[2]"}, {"after"}}, rounds) {
		t.Errorf("run = %s, rounds %v; want success running m's three instances, then after", state, rounds)
	}
	if n := len(h.tis(run)); n != 5 {
		t.Errorf("run has %d task instances (%v), want 5: gen, m[0..2], after", n, h.states(run))
	}
}

// countingStore counts the task instances that whole-run reads return
// (TaskInstanceList of one run without a state filter or limit).
type countingStore struct {
	store.Store
	rows int
}

func (c *countingStore) TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error) {
	tis, err := c.Store.TaskInstanceList(ctx, p)
	if p.DagRunID != 0 && len(p.States) == 0 && p.Limit == 0 {
		c.rows += len(tis)
	}
	return tis, err
}

func TestPassesReadWhatChangedNotTheWholeRun(t *testing.T) {
	t.Parallel()
	const n = 60
	tasks := make([]core.Task, n)
	for i := range tasks {
		tasks[i].TaskID = string(rune('A'+i/26)) + string(rune('a'+i%26))
		if i > 0 {
			tasks[i].DependsOn = []string{tasks[i-1].TaskID}
		}
	}
	h := newHarness(t, core.DAG{DagID: "long", Tasks: tasks})
	counting := &countingStore{Store: h.st}
	h.s.Store = counting
	run := h.trigger("long")
	for round := 0; h.run(run).State == core.RunRunning || round == 0; round++ {
		if round > 3*n {
			t.Fatalf("run did not finish: %v", h.states(run))
		}
		h.clk.Advance(100 * time.Millisecond)
		h.step()
		h.work(succeed)
	}
	if r := h.run(run); r.State != core.RunSuccess {
		t.Fatalf("run = %s, want success", r.State)
	}
	// Reloading the run on every pass reads about n rows per task: n*n.
	if counting.rows >= n*n/4 {
		t.Errorf("passes read %d task instances for a chain of %d, want fewer than %d (what changed, not the run)",
			counting.rows, n, n*n/4)
	}
}
