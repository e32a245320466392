package service_test

import (
	"context"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// An expansion whose producer ended without opening its stream is over,
// not open for ever: with the producer's failure as its error, or, when
// the producer succeeded pushing nothing, complete with no items.
func TestExpansionOfAStreamNeverOpened(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	syncDAG(t, st, core.DAG{DagID: "lazy", Tasks: []core.Task{
		{TaskID: "produce", Operator: "noop", Stream: true},
		{TaskID: "use", Operator: "noop", Iterate: "produce"},
	}})
	for _, end := range []core.TIState{core.TIFailed, core.TISuccess} {
		run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "lazy", RunID: string(end)})
		if err != nil {
			t.Fatal(err)
		}
		e, err := svc.Expansion(ctx, "lazy", run.RunID, "use")
		if err != nil || !e.Open {
			t.Fatalf("before the producer ends: %+v, %v; want open", e, err)
		}
		prod := listTIs(t, st, run.ID)["produce"]
		if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{prod.ID}, To: end, Now: t0}); err != nil {
			t.Fatal(err)
		}
		e, err = svc.Expansion(ctx, "lazy", run.RunID, "use")
		want := ""
		if end == core.TIFailed {
			want = `the producer task "produce" ended failed before it opened its stream`
		}
		if err != nil || e.Open || e.Error != want || e.Items != 0 {
			t.Errorf("producer %s without a stream: %+v, %v; want closed, error %q", end, e, err, want)
		}
	}
}
