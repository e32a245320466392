package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// OnPass hears, pass by pass, the runs a pass created and the task
// instances it queued (the metrics' per-pass series), on both engines:
// three catch-up runs of a one-task DAG make three runs and three queued
// instances.
func TestOnPassCountsRunsCreatedAndTasksQueued(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st store.Store) {
		h := newHarnessOn(t, st, daily("cu", true, 0))
		var runs, queued, passes int
		h.s.OnPass = func(r, q int) { runs, queued, passes = runs+r, queued+q, passes+1 }
		h.step()
		if runs != 3 || queued != 3 || passes == 0 {
			t.Errorf("after the first wake-up: %d runs created, %d queued over %d passes; want 3 and 3",
				runs, queued, passes)
		}
		tis, err := st.TaskInstanceList(h.ctx, &store.TaskInstanceListParams{DagID: "cu", States: []core.TIState{core.TIQueued}})
		if err != nil {
			t.Fatal(err)
		}
		if len(tis) != queued {
			t.Errorf("%d task instances queued in the database, OnPass said %d", len(tis), queued)
		}
		runs, queued = 0, 0
		h.step() // nothing is due: a pass that does nothing says so
		if runs != 0 || queued != 0 {
			t.Errorf("an idle wake-up reported %d runs and %d queued", runs, queued)
		}
	})
}

// OnRunFinished hears the run the scheduler ended, once, with its state
// (a run's trace span).
func TestOnRunFinishedHearsTheEndedRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "one", Tasks: []core.Task{{TaskID: "a"}}})
	var heard []string
	h.s.OnRunFinished = func(run *core.DagRun, state core.DagRunState, _ time.Time) {
		heard = append(heard, run.RunID+" "+string(state))
	}
	run := h.trigger("one")
	if _, state := h.drive(run, succeed); state != core.RunSuccess {
		t.Fatalf("run = %s, want success", state)
	}
	h.step()
	if len(heard) != 1 || heard[0] != run.RunID+" success" {
		t.Errorf("OnRunFinished heard %q, want [%s success]", heard, run.RunID)
	}
}

// OnTryFailedOver hears the try of a worker that stopped heartbeating,
// as it was, with the state the failover gave it (its trace spans).
func TestOnTryFailedOverHearsTheDeadWorkersTry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "dead", Tasks: []core.Task{{TaskID: "a", Retries: 1, RetryDelay: core.Duration(10 * time.Second)}}})
	var heard []string
	h.s.OnTryFailedOver = func(ti *core.TaskInstance, state core.TIState, next *time.Time, _ time.Time) {
		heard = append(heard, fmt.Sprintf("%s try %d %s by %s, retry set %v", ti.TaskID, ti.TryNumber, state, ti.WorkerID, next != nil))
	}
	h.trigger("dead")
	h.step()
	if tis := h.claim("w1", 1); len(tis) != 1 {
		t.Fatalf("claimed %d, want 1", len(tis))
	}
	h.clk.Advance(2 * time.Minute) // past the one-minute heartbeat timeout
	h.step()
	if want := "a try 1 up_for_retry by w1, retry set true"; len(heard) != 1 || heard[0] != want {
		t.Errorf("OnTryFailedOver heard %q, want [%s]", heard, want)
	}
}
