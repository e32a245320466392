package scheduler_test

import (
	"testing"

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
