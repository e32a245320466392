package execapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
)

// A worker heartbeat records the worker process's job row (its name and
// interval) and refreshes the tries it holds; bad input is refused with a
// clear error and records nothing; a worker cannot beat for another.
func TestWorkerHeartbeat(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wl := claimAll(t, env, 2)["a"]
	if _, err := taskClient(env, wl).Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	w1 := env.WorkerClient(t, "w1")
	good := execclient.WorkerHeartbeatRequest{ProcessID: "p1", Hostname: "h", PID: 9, IntervalSeconds: 5, Holding: []string{wl.TI.ID}}
	for _, bad := range []struct {
		req    execclient.WorkerHeartbeatRequest
		status int
		detail string
	}{
		{execclient.WorkerHeartbeatRequest{Hostname: "h", IntervalSeconds: 5}, 400, "process_id is required"},
		{execclient.WorkerHeartbeatRequest{ProcessID: "p1", IntervalSeconds: 0}, 400, "interval_seconds must be positive"},
		{execclient.WorkerHeartbeatRequest{WorkerID: "w2", ProcessID: "p1", IntervalSeconds: 5}, 403, "does not match"},
	} {
		status(t, w1.WorkerHeartbeat(ctx, bad.req), bad.status, bad.detail)
	}
	if jobs, err := env.Store.JobList(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("refused heartbeats recorded %+v (%v)", jobs, err)
	}

	env.Clock.Advance(time.Minute)
	if err := w1.WorkerHeartbeat(ctx, good); err != nil {
		t.Fatal(err)
	}
	jobs, err := env.Store.JobList(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].Role != "worker" || jobs[0].WorkerID != "w1" || jobs[0].Interval != 5*time.Second ||
		!jobs[0].Heartbeat.Equal(env.Clock.Now()) {
		t.Fatalf("job rows = %+v (%v), want w1's process beating every 5 s, now", jobs, err)
	}
	if ti := env.TI(t, wl.TI.ID); ti.State != core.TIRunning || ti.LastHeartbeat == nil || !ti.LastHeartbeat.Equal(env.Clock.Now()) {
		t.Errorf("the held try's heartbeat = %v, want refreshed to now", ti.LastHeartbeat)
	}
}
