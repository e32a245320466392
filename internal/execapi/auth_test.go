package execapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

func twoTaskDAG(id string) core.DAG {
	return core.DAG{DagID: id, Params: map[string]any{"who": "param", "n": 1.0}, Tasks: []core.Task{
		{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop", Retries: 2, RetryDelay: core.Duration(10 * time.Second)},
	}}
}

// claimAll claims every queued workload of env with a fresh worker.
func claimAll(t testing.TB, env *execapitest.Env, n int) map[string]execclient.Workload {
	t.Helper()
	wls, err := env.WorkerClient(t, "w1").Claim(context.Background(), execclient.ClaimRequest{Limit: n, WaitSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(wls) != n {
		t.Fatalf("claimed %d workloads, want %d", len(wls), n)
	}
	out := map[string]execclient.Workload{}
	for _, wl := range wls {
		out[wl.TI.TaskID] = wl
	}
	return out
}

func taskClient(env *execapitest.Env, wl execclient.Workload) *execclient.Client {
	return execclient.NewClient(env.URL, wl.Token, execclient.ClientOptions{Retries: -1}).
		WithToken(wl.Token, execclient.TaskIdentity{TIID: wl.TI.ID, DagID: wl.TI.DagID, RunID: wl.TI.RunID, TaskID: wl.TI.TaskID, MapIndex: wl.TI.MapIndex})
}

// status asserts err is an API error with the status (and detail fragment).
func status(t *testing.T, err error, want int, detail string) {
	t.Helper()
	var ae *execclient.Error
	if !errors.As(err, &ae) || ae.Status != want || !strings.Contains(ae.Problem.Detail, detail) {
		t.Fatalf("err = %v, want status %d with %q", err, want, detail)
	}
}

func TestTokenRules(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wls := claimAll(t, env, 2)
	a, b := wls["a"], wls["b"]
	if a.Task.TaskID != "a" || a.DagRun.RunID != "r1" || a.Dag.Params["who"] != "param" {
		t.Fatalf("workload = %+v", a)
	}
	ca := taskClient(env, a)

	// Missing token: 401 problem+json.
	req, _ := http.NewRequest(http.MethodPut, env.URL+"/task-instances/"+a.TI.ID+"/heartbeat", strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body), "missing bearer token") {
		t.Fatalf("missing token: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	// Forged (other key) and expired tokens: 401.
	other, _ := auth.NewTokens(auth.Config{Key: []byte(strings.Repeat("k", 40))}, env.Clock)
	forged, _ := other.IssueExecution(a.TI.ID)
	past := clocktest.New(env.Clock.Now().Add(-time.Hour))
	old, _ := auth.NewTokens(auth.Config{Key: execapitest.Key}, past)
	expired, _ := old.IssueExecution(a.TI.ID)
	for name, tok := range map[string]string{"forged": forged, "expired": expired} {
		_, err := ca.WithToken(tok, ca.Identity).Run(ctx, a.TI.ID, execclient.RunRequest{})
		status(t, err, 401, "token")
		if got := env.TI(t, a.TI.ID).State; got != core.TIQueued {
			t.Fatalf("%s token changed state to %s", name, got)
		}
	}

	// Wrong scope both ways: 403.
	_, err = ca.WithToken(env.WorkerClient(t, "w1").Token(), ca.Identity).Run(ctx, a.TI.ID, execclient.RunRequest{})
	status(t, err, 403, "scope")
	_, err = ca.Claim(ctx, execclient.ClaimRequest{Limit: 1})
	status(t, err, 403, "scope")

	// Another try's token: 403, nothing changed.
	_, err = ca.Run(ctx, b.TI.ID, execclient.RunRequest{})
	status(t, err, 403, "token subject does not match task instance")
	if got := env.TI(t, b.TI.ID).State; got != core.TIQueued {
		t.Fatalf("b is %s after a refused run", got)
	}

	// run: queued → running, with the run context; a second run is 409.
	rc, err := ca.Run(ctx, a.TI.ID, execclient.RunRequest{Hostname: "h", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	if rc.TI.State != core.TIRunning || rc.MaxTries != 1 || rc.Params["who"] != "conf" || rc.Params["n"] != 1.0 {
		t.Fatalf("run context = %+v", rc)
	}
	_, err = ca.Run(ctx, a.TI.ID, execclient.RunRequest{})
	status(t, err, 409, "cannot start")
	var ae *execclient.Error
	if errors.As(err, &ae); ae.Problem.Reason != execclient.ReasonInvalidState {
		t.Fatalf("reason = %q", ae.Problem.Reason)
	}
	if err := ca.Heartbeat(ctx, a.TI.ID, execclient.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}

	// Finish, then every write of the finished try is refused and changes nothing.
	sr, err := ca.SetState(ctx, a.TI.ID, core.TISuccess)
	if err != nil || sr.State != core.TISuccess {
		t.Fatalf("state = %+v, %v", sr, err)
	}
	err = ca.Heartbeat(ctx, a.TI.ID, execclient.HeartbeatRequest{})
	status(t, err, 409, "not running")
	if !errors.Is(err, core.ErrConflict) {
		t.Fatalf("heartbeat error does not match ErrConflict: %v", err)
	}
	_, err = ca.SetState(ctx, a.TI.ID, core.TIFailed)
	status(t, err, 409, "not running")
	status(t, ca.XComPush(ctx, "k", 1), 403, "not running")
	if got := env.TI(t, a.TI.ID).State; got != core.TISuccess {
		t.Fatalf("finished try moved to %s", got)
	}
	if _, err := env.Store.XComGet(ctx, "d", "r1", "a", -1, "k"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("xcom written by a finished try: %v", err)
	}
}

func TestTokenRefreshHeader(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	a := claimAll(t, env, 2)["a"]
	ca := taskClient(env, a)
	refreshed := make(chan string, 1)
	ca.OnTokenRefresh(func(s string) { refreshed <- s })
	if _, err := ca.Run(ctx, a.TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	if ca.Token() != a.Token {
		t.Fatal("fresh token was replaced")
	}
	env.Clock.Advance(9 * time.Minute) // 1 min left of 10: refresh
	if err := ca.Heartbeat(ctx, a.TI.ID, execclient.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	fresh := <-refreshed
	if fresh == a.Token || ca.Token() != fresh {
		t.Fatal("token was not swapped")
	}
	env.Clock.Advance(5 * time.Minute) // the original has expired; the fresh one works
	if err := ca.Heartbeat(ctx, a.TI.ID, execclient.HeartbeatRequest{}); err != nil {
		t.Fatalf("heartbeat with refreshed token: %v", err)
	}
	_, err := ca.WithToken(a.Token, ca.Identity).SetState(ctx, a.TI.ID, core.TISuccess)
	status(t, err, 401, "expired")
}
