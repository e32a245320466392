package service_test

import (
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

// TestProducerTriggerStopsWhenItsTryStopsWaiting: a producer sensor's
// trigger is deleted — so its triggerer stops running it at its next
// reconcile — as soon as its deferred try stops waiting on it because
// its deferral timed out, it was marked failed, or it was cleared; its
// stream stays open for the next try to resume.
func TestProducerTriggerStopsWhenItsTryStopsWaiting(t *testing.T) {
	t.Parallel()
	for name, stop := range map[string]func(t *testing.T, svc *service.Service, clk *clocktest.Clock, fetch *core.TaskInstance){
		"timed out": func(t *testing.T, svc *service.Service, clk *clocktest.Clock, _ *core.TaskInstance) {
			clk.Advance(2 * time.Second)
			if n, err := svc.TimeoutDeferred(t.Context(), 10); err != nil || n != 1 {
				t.Fatalf("timeout = %d, %v; want 1", n, err)
			}
		},
		"marked failed": func(t *testing.T, svc *service.Service, _ *clocktest.Clock, fetch *core.TaskInstance) {
			if _, err := svc.MarkTaskInstance(t.Context(), core.System, keyOf(fetch), core.TIFailed); err != nil {
				t.Fatal(err)
			}
		},
		"cleared": func(t *testing.T, svc *service.Service, _ *clocktest.Clock, fetch *core.TaskInstance) {
			if _, err := svc.Clear(t.Context(), core.System, service.ClearParams{DagID: fetch.DagID, RunID: fetch.RunID,
				TaskIDs: []string{"fetch"}}); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, st, clk := streamSvc(t)
			ctx := t.Context()
			syncDAG(t, st, core.DAG{DagID: "pages", Tasks: []core.Task{
				{TaskID: "fetch", Operator: "sensor", StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "pages"}}},
				{TaskID: "insert", Operator: "noop", Iterate: "fetch"},
			}})
			run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "pages", RunID: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			fetch := listTIs(t, st, run.ID)["fetch"]
			trig, err := svc.StartProducer(ctx, &fetch, core.Deferral{Trigger: core.TriggerSpec{Type: "pages"}, Timeout: core.Duration(time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			fetch = listTIs(t, st, run.ID)["fetch"]
			stop(t, svc, clk, &fetch)
			if _, err := st.TriggerGet(ctx, trig); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("the producer's trigger after its try stopped waiting: %v, want it deleted", err)
			}
			s, err := st.StreamGet(ctx, core.TaskStreamID(run.ID, "fetch"))
			if err != nil || s.Closed {
				t.Errorf("the producer's stream = %+v, %v; want it open for the next try", s, err)
			}
		})
	}
}
