package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// syncDAG records spec as an active, unpaused DAG.
func syncDAG(t *testing.T, st store.Store, spec core.DAG) {
	t.Helper()
	if _, _, err := st.DagSync(context.Background(), &store.DagSyncParams{
		Spec: spec, Hash: spec.DagID + "-hash", Now: t0,
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.AssetSync(context.Background(), &store.AssetSyncParams{Spec: &spec, Now: t0}); err != nil {
		t.Fatal(err)
	}
}

func listTIs(t *testing.T, st store.Store, runID int64) map[string]core.TaskInstance {
	t.Helper()
	tis, err := st.TaskInstanceList(context.Background(), &store.TaskInstanceListParams{DagRunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]core.TaskInstance{}
	for _, ti := range tis {
		out[ti.TaskID] = ti
	}
	return out
}

// newSvc is a service over st with clock clk.
func newSvc(st store.Store, clk core.Clock) *service.Service {
	return service.New(service.Config{Store: st, Clock: clk})
}

// clearTasks clears the named tasks of run (every state but none).
func clearTasks(ctx context.Context, st store.Store, clk core.Clock, run *core.DagRun, keepState bool, tasks ...string) error {
	_, err := newSvc(st, clk).Clear(ctx, core.System, service.ClearParams{DagID: run.DagID, RunID: run.RunID,
		TaskIDs: tasks, KeepTaskState: keepState})
	return err
}

// keyOf names a task instance.
func keyOf(ti *core.TaskInstance) core.TIKey {
	return core.TIKey{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex}
}

// runningRun triggers a run of dagID through svc and sets it running, as
// the scheduler starts a queued run.
func runningRun(t *testing.T, st store.Store, svc *service.Service, dagID string) *core.DagRun {
	t.Helper()
	ctx := context.Background()
	run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: dagID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunRunning, Now: t0}); err != nil {
		t.Fatal(err)
	}
	return run
}

// startTry queues, claims and starts the current try of task in run, as a
// worker would, and returns it running.
func startTry(t *testing.T, st store.Store, run *core.DagRun, task string) *core.TaskInstance {
	t.Helper()
	ctx := context.Background()
	ti := listTIs(t, st, run.ID)[task]
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: core.TIQueued, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TaskInstanceClaim(ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Queues: []string{core.DefaultQueue}, Limit: 10, Now: t0}); err != nil {
		t.Fatal(err)
	}
	started, err := st.TaskInstanceStart(ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: "w", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	return started
}

// retryTry starts the next try of an up_for_retry instance, as the
// scheduler does when it is due.
func retryTry(t *testing.T, st store.Store, ti *core.TaskInstance) {
	t.Helper()
	if err := st.TaskInstanceNewTry(context.Background(), &store.TaskInstanceNewTryParams{
		ID: ti.ID, NewID: ti.ID + "-retry", To: core.TIScheduled, Now: t0,
	}); err != nil {
		t.Fatal(err)
	}
}
