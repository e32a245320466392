package execapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// tiReads counts the task instances read by id through it.
type tiReads struct {
	store.Store
	n atomic.Int64
}

func (c *tiReads) TaskInstanceGet(ctx context.Context, id string) (*core.TaskInstance, error) {
	c.n.Add(1)
	return c.Store.TaskInstanceGet(ctx, id)
}

// A try this server started and handed out ends, on its state report with
// the token handed with it, without the try gate's read of it. A try that
// left running meanwhile is judged as the gate judges it, on both engines:
// marked failed, its report is refused 409 not_running and it stays
// failed; cleared (a new try replaced it), 409 invalid_state and the new
// try stands; failed over for missed heartbeats, its late success ends it;
// and it may defer, and then ends from its resumed start.
func TestHandedOutTriesEndAsTheGateWouldHaveThem(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			st := openEngine(t, engine)
			reads := &tiReads{Store: st}
			env := execapitest.NewServing(t, st, reads, execapi.Config{})
			testHandedOut(t, env, reads)
		})
	}
}

func testHandedOut(t *testing.T, env *execapitest.Env, reads *tiReads) {
	ctx := t.Context()
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop"},
		{TaskID: "c", Operator: "noop", Retries: 1}, {TaskID: "d", Operator: "noop"}, {TaskID: "e", Operator: "noop"}}}
	env.SeedRun(t, dag, "r1", "")
	worker := env.WorkerClient(t, "w1")
	start := &execclient.RunRequest{Hostname: "h1", PID: 42}
	claimed, err := worker.Claim(ctx, execclient.ClaimRequest{Limit: 5, Start: start})
	if err != nil || len(claimed) != 5 {
		t.Fatalf("claim = %d workloads, %v; want 5", len(claimed), err)
	}
	wls := map[string]execclient.Workload{}
	for _, wl := range claimed {
		wls[wl.TI.TaskID] = wl
	}
	finish := func(name string, wl execclient.Workload) (*execclient.StateResponse, error) {
		t.Helper()
		before := reads.n.Load()
		sr, err := taskClient(env, wl).Finish(ctx, wl.TI.ID, execclient.StateRequest{State: core.TISuccess})
		if name == "a" && reads.n.Load() != before {
			t.Errorf("a's report read a try %d times, want none: it was handed out with the report's token", reads.n.Load()-before)
		}
		return sr, err
	}

	if sr, err := finish("a", wls["a"]); err != nil || sr.State != core.TISuccess {
		t.Fatalf("a's report = %+v, %v; want success", sr, err)
	}
	if ti := env.TI(t, wls["a"].TI.ID); ti.State != core.TISuccess {
		t.Errorf("a is %s, want success", ti.State)
	}

	if _, err := env.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{wls["b"].TI.ID},
		To: core.TIFailed, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	_, err = finish("b", wls["b"])
	status(t, err, 409, "is not running (it is failed)")
	if ti := env.TI(t, wls["b"].TI.ID); ti.State != core.TIFailed {
		t.Errorf("b is %s after its refused report, want failed", ti.State)
	}

	svc := service.New(service.Config{Store: env.Store, Clock: env.Clock})
	if _, err := svc.Clear(ctx, core.System, service.ClearParams{DagID: "d", RunID: "r1", TaskIDs: []string{"e"}}); err != nil {
		t.Fatal(err)
	}
	_, err = finish("e", wls["e"])
	status(t, err, 409, "no longer current")
	var ae *execclient.Error
	if errors.As(err, &ae); ae == nil || ae.Problem.Reason != execclient.ReasonInvalidState {
		t.Errorf("e's report after a clear: %v, want reason %s", err, execclient.ReasonInvalidState)
	}
	if cur, err := env.Store.TaskInstanceGetByKey(ctx, "d", "r1", "e", core.NoMapIndex); err != nil || cur.ID == wls["e"].TI.ID || cur.State.Terminal() {
		t.Errorf("e after its old try's report: %+v, %v; want the clear's new try, not ended", cur, err)
	}

	if res, err := svc.FailDeadTry(ctx, env.TI(t, wls["c"].TI.ID)); err != nil || res.State != core.TIUpForRetry {
		t.Fatalf("fail over c: %+v, %v", res, err)
	}
	if sr, err := finish("c", wls["c"]); err != nil || sr.State != core.TISuccess {
		t.Fatalf("c's late report = %+v, %v; want success", sr, err)
	}

	d := taskClient(env, wls["d"])
	sr, err := d.Defer(ctx, wls["d"].TI.ID, core.Deferral{
		Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1m"}`)}, NextMethod: "after"})
	if err != nil || sr.State != core.TIDeferred {
		t.Fatalf("d's deferral = %+v, %v; want deferred", sr, err)
	}
	if _, err := env.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{wls["d"].TI.ID},
		From: []core.TIState{core.TIDeferred}, To: core.TIQueued, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err) // as its trigger's event resumes it
	}
	resumed, err := worker.Claim(ctx, execclient.ClaimRequest{Limit: 1, Start: start})
	if err != nil || len(resumed) != 1 || resumed[0].TI.ID != wls["d"].TI.ID || resumed[0].TI.NextMethod != "after" {
		t.Fatalf("resume d = %+v, %v", resumed, err)
	}
	if sr, err := finish("d", resumed[0]); err != nil || sr.State != core.TISuccess {
		t.Fatalf("d's report after it resumed = %+v, %v; want success", sr, err)
	}
	if ti := env.TI(t, wls["d"].TI.ID); ti.State != core.TISuccess || ti.NextMethod != "after" {
		t.Errorf("d is %s (next method %q), want success after it resumed", ti.State, ti.NextMethod)
	}
}
