package execapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

func TestStateRetryDecision(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wls := claimAll(t, env, 2)
	wake := env.Store.Subscribe(ctx, store.ChannelTasks) // a try of a task without outlets ended
	for _, name := range []string{"a", "b"} {
		c := taskClient(env, wls[name])
		if _, err := c.Run(ctx, wls[name].TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := taskClient(env, wls["b"]).SetState(ctx, wls["b"].TI.ID, core.TIRunning)
	status(t, err, 400, "state must be")
	// a has no retries: failed. b has 2: up_for_retry after retry_delay.
	sa, err := taskClient(env, wls["a"]).SetState(ctx, wls["a"].TI.ID, core.TIUpForRetry)
	if err != nil || sa.State != core.TIFailed || sa.NextRetryAt != nil {
		t.Fatalf("a: %+v %v", sa, err)
	}
	<-wake // the scheduler is woken at once
	sb, err := taskClient(env, wls["b"]).SetState(ctx, wls["b"].TI.ID, core.TIFailed)
	if err != nil || sb.State != core.TIUpForRetry {
		t.Fatalf("b: %+v %v", sb, err)
	}
	want := env.Clock.Now().Add(10 * time.Second)
	ti := env.TI(t, wls["b"].TI.ID)
	if ti.State != core.TIUpForRetry || ti.NextRetryAt == nil || !ti.NextRetryAt.Equal(want) {
		t.Fatalf("b row: state %s next_retry_at %v, want %v", ti.State, ti.NextRetryAt, want)
	}
	_, err = taskClient(env, wls["b"]).SetState(ctx, wls["b"].TI.ID, core.TISuccess)
	status(t, err, 409, "not running")
}

// A start whose answer was lost is asked again by the same worker process
// (same host and pid): it gets the try it started. Any other process —
// another worker, or this worker's next life — is refused, so the try
// cannot run twice.
func TestRepeatedStartBySameProcess(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wl := claimAll(t, env, 2)["a"]
	c := taskClient(env, wl)
	me := execclient.RunRequest{Hostname: "host-1", PID: 4242}
	first, err := c.Run(ctx, wl.TI.ID, me)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Run(ctx, wl.TI.ID, me)
	if err != nil || again.TI.ID != first.TI.ID || again.TI.State != core.TIRunning || !again.TI.StartDate.Equal(*first.TI.StartDate) {
		t.Fatalf("the same process's repeated start: %+v, %v; want the try it started", again, err)
	}
	for _, other := range []execclient.RunRequest{{Hostname: "host-1", PID: 4243}, {Hostname: "host-2", PID: 4242}, {}} {
		_, err := c.Run(ctx, wl.TI.ID, other)
		status(t, err, 409, "cannot start")
	}
}
