package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testTaskInstanceTotals: every run's current tries counted per queue and
// state, unscheduled ones under state "".
func testTaskInstanceTotals(t *testing.T, f *fixture) {
	got, err := f.st.TaskInstanceTotals(f.ctx)
	must(t, err, "totals of an empty store")
	if len(got) != 0 {
		t.Fatalf("totals of an empty store = %+v, want none", got)
	}
	onQueue := func(id string, state core.TIState, queue string) store.NewTaskInstance {
		ti := newTI(id, state)
		ti.Queue = queue
		return ti
	}
	f.run("d", "a", onQueue("x", core.TIQueued, "default"), onQueue("y", core.TIQueued, "default"), onQueue("z", core.TINone, "default"))
	f.run("d", "b", onQueue("x", core.TIQueued, "etl"), onQueue("y", core.TIFailed, "default"))
	got, err = f.st.TaskInstanceTotals(f.ctx)
	must(t, err, "totals")
	want := []store.TaskInstanceTotal{
		{Queue: "default", State: core.TINone, Count: 1},
		{Queue: "default", State: core.TIFailed, Count: 1},
		{Queue: "default", State: core.TIQueued, Count: 2},
		{Queue: "etl", State: core.TIQueued, Count: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}
