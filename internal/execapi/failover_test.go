package execapi_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// docs/state-machines.md#dead-workers over HTTP on both engines: a try
// failed over for missed heartbeats (a worker cut off from every
// api-server) is its worker's again until its retry begins. Its late log
// chunk is stored, its late heartbeat takes it back (running, no retry
// time), and its late success report ends it as success; once the retry
// began, the old try's report is refused 409 and the retry stands. A
// try's worker, and only it, renews the try's token with its credential
// (POST /execution/task-instances/{id}/token) while it may report.
func TestLateReportOfFailedOverTry(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			testLateReport(t, execapitest.NewOn(t, openEngine(t, engine), execapi.Config{}))
		})
	}
}

func testLateReport(t *testing.T, env *execapitest.Env) {
	ctx := t.Context()
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop", Retries: 2, RetryDelay: core.Duration(time.Minute)},
		{TaskID: "b", Operator: "noop", Retries: 2, RetryDelay: core.Duration(time.Minute)},
		{TaskID: "c", Operator: "noop", Retries: 2, RetryDelay: core.Duration(time.Minute)},
	}}
	env.SeedRun(t, dag, "r1", "")
	wls := claimAll(t, env, 3)
	svc := service.New(service.Config{Store: env.Store, Clock: env.Clock})
	failOver := func(name string) {
		t.Helper()
		c := taskClient(env, wls[name])
		if _, err := c.Run(ctx, wls[name].TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
		res, err := svc.FailDeadTry(ctx, env.TI(t, wls[name].TI.ID))
		if err != nil || res.State != core.TIUpForRetry {
			t.Fatalf("fail over %s: %+v %v", name, res, err)
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		failOver(name)
	}

	// a: its worker heartbeats again and keeps its try.
	a := taskClient(env, wls["a"])
	if err := a.Heartbeat(ctx, wls["a"].TI.ID, execclient.HeartbeatRequest{}); err != nil {
		t.Fatalf("late heartbeat: %v", err)
	}
	if ti := env.TI(t, wls["a"].TI.ID); ti.State != core.TIRunning || ti.NextRetryAt != nil || ti.TryNumber != 1 {
		t.Fatalf("after the late heartbeat a is %s (next retry %v, try %d), want running try 1 with no retry time",
			ti.State, ti.NextRetryAt, ti.TryNumber)
	}

	// b: its token expired during the outage; its worker renews it with
	// its credential (another worker cannot), then its log's tail and its
	// success arrive late, and stand.
	if _, err := env.WorkerClient(t, "w2").TaskToken(ctx, wls["b"].TI.ID); err == nil {
		t.Fatal("another worker got a token for b")
	} else {
		status(t, err, 403, "claimed by worker")
	}
	fresh, err := env.WorkerClient(t, "w1").TaskToken(ctx, wls["b"].TI.ID)
	if err != nil {
		t.Fatalf("renew b's token: %v", err)
	}
	b := taskClient(env, execclient.Workload{TI: wls["b"].TI, Token: fresh})
	if _, err := b.AppendLog(ctx, wls["b"].TI.ID, 0, []byte("done\n")); err != nil {
		t.Fatalf("late log chunk: %v", err)
	}
	sr, err := b.SetState(ctx, wls["b"].TI.ID, core.TISuccess)
	if err != nil || sr.State != core.TISuccess {
		t.Fatalf("late success: %+v %v", sr, err)
	}
	if ti := env.TI(t, wls["b"].TI.ID); ti.State != core.TISuccess || ti.TryNumber != 1 {
		t.Fatalf("after the late success b is %s try %d, want success try 1", ti.State, ti.TryNumber)
	}
	_, err = b.SetState(ctx, wls["b"].TI.ID, core.TIFailed)
	status(t, err, 409, "not running")

	// c: its retry begins first; the old try's report is refused.
	next := "11111111-0000-4000-8000-0000000000c2"
	if err := env.Store.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{ID: wls["c"].TI.ID, NewID: next,
		To: core.TIScheduled, Now: env.Clock.Now(), From: core.TIUpForRetry}); err != nil {
		t.Fatal(err)
	}
	c := taskClient(env, wls["c"])
	_, err = c.SetState(ctx, wls["c"].TI.ID, core.TISuccess)
	status(t, err, 409, "no longer current")
	err = c.Heartbeat(ctx, wls["c"].TI.ID, execclient.HeartbeatRequest{})
	status(t, err, 409, "no longer current")
	_, err = env.WorkerClient(t, "w1").TaskToken(ctx, wls["c"].TI.ID)
	status(t, err, 409, "no longer current")
	if ti := env.TI(t, next); ti.State != core.TIScheduled || ti.TryNumber != 2 {
		t.Fatalf("c's retry is %s try %d, want scheduled try 2", ti.State, ti.TryNumber)
	}
}
