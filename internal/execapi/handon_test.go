package execapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
)

// A final state report may claim the worker's next try (next, ADR 0032):
// the answer carries it as a claim would, started for the process named,
// its token good for its routes. Only the worker's credential, sent beside
// the try's token, authorizes it: without it, with a try's token in its
// place, with no process named or with a deferral, the report is refused
// and nothing changes. A report whose queues hold nothing claims nothing.
func TestStateReportClaimsTheNextTry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := execapitest.New(t, execapi.Config{})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop"},
		{TaskID: "c", Operator: "noop", Queue: "other"}}}
	env.SeedRun(t, dag, "r1", "")
	worker := env.WorkerClient(t, "w1")
	wls, err := worker.Claim(ctx, execclient.ClaimRequest{Limit: 1, Queues: []string{core.DefaultQueue},
		Start: &execclient.RunRequest{Hostname: "h1", PID: 42}})
	if err != nil || len(wls) != 1 || wls[0].TI.Queue != core.DefaultQueue {
		t.Fatalf("claim = %+v, %v; want a or b", wls, err)
	}
	a := wls[0] // a or b: the other is the next
	other := map[string]string{"a": "b", "b": "a"}[a.TI.TaskID]
	id := execclient.TaskIdentity{TIID: a.TI.ID, DagID: "d", RunID: "r1", TaskID: a.TI.TaskID, MapIndex: core.NoMapIndex}
	next := &execclient.NextClaim{Start: execclient.RunRequest{Hostname: "h1", PID: 42}}

	for _, bad := range []struct {
		name   string
		c      *execclient.Client
		req    execclient.StateRequest
		status int
		detail string
	}{
		{"no worker credential", execclient.NewClient(env.URL, a.Token, execclient.ClientOptions{Retries: -1}),
			execclient.StateRequest{State: core.TISuccess, Next: next}, 401, "missing bearer token in the Weir-Worker-Authorization header"},
		{"a try's token as the worker's", taskClient(env, a),
			execclient.StateRequest{State: core.TISuccess, Next: next}, 403, `needs a token of scope "worker"`},
		{"no process", worker.WithToken(a.Token, id),
			execclient.StateRequest{State: core.TISuccess, Next: &execclient.NextClaim{}}, 400, "next.start names the worker process"},
		{"a deferral", worker.WithToken(a.Token, id),
			execclient.StateRequest{State: core.TIDeferred, Deferral: &core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta"}}, Next: next},
			400, "a deferral claims no next try"},
	} {
		_, err := bad.c.Finish(ctx, a.TI.ID, bad.req)
		t.Run(bad.name, func(t *testing.T) { status(t, err, bad.status, bad.detail) })
	}
	if ti := env.TI(t, a.TI.ID); ti.State != core.TIRunning {
		t.Fatalf("%s is %s after refused reports; want running", a.TI.TaskID, ti.State)
	}

	sr, err := worker.WithToken(a.Token, id).Finish(ctx, a.TI.ID, execclient.StateRequest{State: core.TISuccess, Next: next})
	if err != nil || sr.State != core.TISuccess || sr.Next == nil {
		t.Fatalf("report with next = %+v, %v; want success and %s", sr, err, other)
	}
	b := *sr.Next
	if b.TI.TaskID != other || b.TI.State != core.TIRunning || b.TI.WorkerID != "w1" || b.TI.Hostname != "h1" || b.TI.PID != 42 ||
		b.Run == nil || b.Token == "" || b.Task.TaskID != other || b.DagRun.RunID != "r1" {
		t.Fatalf("next workload = %+v; want %s, started for w1 on h1:42, with its run context and token", b, other)
	}
	if err := taskClient(env, b).Heartbeat(ctx, b.TI.ID, execclient.HeartbeatRequest{Hostname: "h1", PID: 42}); err != nil {
		t.Fatalf("b's token: %v", err)
	}

	bid := execclient.TaskIdentity{TIID: b.TI.ID, DagID: "d", RunID: "r1", TaskID: other, MapIndex: core.NoMapIndex}
	sr, err = worker.WithToken(b.Token, bid).Finish(ctx, b.TI.ID, execclient.StateRequest{State: core.TISuccess, Next: next})
	if err != nil || sr.State != core.TISuccess || sr.Next != nil {
		t.Fatalf("report with nothing queued in default = %+v, %v; want success and no next", sr, err)
	}
	if ti := env.TI(t, b.TI.ID); ti.State != core.TISuccess {
		t.Fatalf("%s is %s, want success", other, ti.State)
	}
}

// A started workload's run context leaves out the try and the run the
// workload carries, for a client that speaks execclient.SlimRunVersion:
// a claim's and a final state report's answers hold each once, where a
// client of the version before gets them twice, as it expects. The client
// restores them, so both see the same run context.
func TestStartedWorkloadsCarryTheirTryOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	by := execclient.RunRequest{Hostname: "h1", PID: 42}
	for _, version := range []string{"2026-12-04", execclient.SlimRunVersion} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			env := execapitest.New(t, execapi.Config{})
			env.SeedRun(t, manyTasks("d", 2), "r1", "")
			var answers []string
			tok, err := env.Tokens.IssueWorker("w1", 0)
			if err != nil {
				t.Fatal(err)
			}
			worker := execclient.NewClient(env.URL, tok, execclient.ClientOptions{Retries: -1,
				HTTPClient: &http.Client{Transport: versionAs{version, &answers}}})
			wls, err := worker.Claim(ctx, execclient.ClaimRequest{Limit: 1, Start: &by})
			if err != nil || len(wls) != 1 {
				t.Fatalf("claim = %+v, %v", wls, err)
			}
			a := wls[0]
			id := execclient.TaskIdentity{TIID: a.TI.ID, DagID: "d", RunID: "r1", TaskID: a.TI.TaskID, MapIndex: core.NoMapIndex}
			sr, err := worker.WithToken(a.Token, id).Finish(ctx, a.TI.ID,
				execclient.StateRequest{State: core.TISuccess, Next: &execclient.NextClaim{Start: by}})
			if err != nil || sr.Next == nil {
				t.Fatalf("report with next = %+v, %v", sr, err)
			}
			twice := version < execclient.SlimRunVersion
			for i, wl := range []execclient.Workload{a, *sr.Next} {
				if wl.Run == nil || !reflect.DeepEqual(wl.Run.TI, wl.TI) || wl.Run.DagRun.ID != wl.DagRun.ID || wl.Run.DagRun.RunID != "r1" ||
					wl.Run.TI.State != core.TIRunning {
					t.Errorf("workload %d: run context %+v; want the workload's own running try %s and run r1", i, wl.Run, wl.TI.ID)
				}
				// The answer names the try's id once per copy of it.
				if n := strings.Count(answers[i], `"id":"`+wl.TI.ID+`"`); n != map[bool]int{true: 2, false: 1}[twice] {
					t.Errorf("answer %d names the try %d times, want %d (twice: %v): %s", i, n, map[bool]int{true: 2, false: 1}[twice], twice, answers[i])
				}
			}
		})
	}
}

// versionAs sends every request as a client of version and keeps each
// answer's body.
type versionAs struct {
	version string
	answers *[]string
}

func (v versionAs) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(execclient.APIVersionHeader, v.version)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	*v.answers = append(*v.answers, string(b))
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}
