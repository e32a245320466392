package worker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/taskproc"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// cutOff stands between the worker and every api-server: once the try
// has started, no request reaches a server until mend.
type cutOff struct {
	next   http.RoundTripper
	mu     sync.Mutex
	cut    bool
	mended bool
}

func (c *cutOff) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut {
		return nil, errors.New("every api-server is unreachable")
	}
	resp, err := c.next.RoundTrip(r)
	if err == nil && started(r, resp) {
		c.mu.Lock()
		c.cut = !c.mended
		c.mu.Unlock()
	}
	return resp, err
}

// started reports whether resp answers a request that started a try: a
// run call, or a claim that returned a started workload.
func started(r *http.Request, resp *http.Response) bool {
	if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/run") {
		return true
	}
	if !strings.HasSuffix(r.URL.Path, "/workloads/claim") {
		return false
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return bytes.Contains(b, []byte(`"run":{`))
}

// cutOffClient is worker w1's client, cut off by the returned cutOff once
// a try has started, retrying little.
func cutOffClient(t *testing.T, env *execapitest.Env) (*execclient.Client, *cutOff) {
	t.Helper()
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	outage := &cutOff{next: http.DefaultTransport}
	return execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: outage}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond}), outage
}

func (c *cutOff) mend() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut, c.mended = false, true
}

// docs/state-machines.md#dead-workers, end to end: a worker cut off from
// every api-server while its try ends, for longer than the heartbeat
// timeout (the dead-worker check fails the try over) and than the try's
// token lives. Once the
// api-server is reachable again, the worker's kept log tail and final
// state arrive: the try ends success on its first try, its command having
// run once, and its log has every line.
func TestWorkerOutlastsAnOutageLongerThanTheHeartbeatTimeout(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	client, outage := cutOffClient(t, env)
	runs := filepath.Join(t.TempDir(), "runs")
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "once", Operator: operator.Bash, Retries: 3,
		RetryDelay: core.Duration(time.Minute), Args: map[string]any{"bash_command": "echo ran >> " + runs + "; echo last line"}}}}
	_, tis := env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, nil, func(w *Worker) { w.Client = client })

	wait.Until(t, 30*time.Second, "the command to run", func() bool {
		b, _ := os.ReadFile(runs)
		return len(b) > 0
	})
	outage.mu.Lock()
	cut := outage.cut
	outage.mu.Unlock()
	if !cut {
		t.Fatal("the command ran before the outage began")
	}
	// The scheduler's dead-worker check: the try's heartbeat is long gone.
	svc := service.New(service.Config{Store: env.Store, Clock: env.Clock})
	res, err := svc.FailDeadTry(t.Context(), env.TI(t, tis[0].ID))
	if err != nil || res.State != core.TIUpForRetry {
		t.Fatalf("fail the try over: %+v %v", res, err)
	}
	// The outage outlasts the try's token too ([api_auth]
	// jwt_expiration_time): the worker renews it with its credential.
	env.Clock.Advance(auth.DefaultExecutionTTL + time.Minute)
	outage.mend()

	wait.Until(t, 30*time.Second, "once to be reported", func() bool { return stateOf(t, env, "r1", "once") == core.TISuccess })
	ti := env.TI(t, tis[0].ID)
	if ti.TryNumber != 1 {
		t.Errorf("once succeeded on try %d, want its first", ti.TryNumber)
	}
	if b, err := os.ReadFile(runs); err != nil || string(b) != "ran\n" {
		t.Errorf("the command's runs: %q, %v; want one", b, err)
	}
	if log := readLog(t, env, ti); !strings.Contains(log, "last line\n") || !strings.Contains(log, "try ended success") {
		t.Errorf("the try's log lost its tail:\n%s", log)
	}
}

// A worker that died holding a try's final state and the tail of its log
// (every api-server away) left both in its run folder: its next life ships
// the tail, then reports the state, even though the scheduler failed the
// try over meanwhile and the try's token expired. The try ends success on
// its first try with its whole log.
func TestRestartShipsTheDeadWorkersLogTail(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "t", Operator: operator.Bash, Retries: 3,
		RetryDelay: core.Duration(time.Minute), Args: map[string]any{"bash_command": "true"}}}}
	env.SeedRun(t, dag, "r1", "")
	wls, err := env.WorkerClient(t, "w1").Claim(t.Context(), execclient.ClaimRequest{Limit: 1})
	if err != nil || len(wls) != 1 {
		t.Fatalf("claim: %v %v", wls, err)
	}
	wl := wls[0]
	tc := env.WorkerClient(t, "w1").WithToken(wl.Token, execclient.TaskIdentity{TIID: wl.TI.ID})
	if _, err := tc.Run(t.Context(), wl.TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.AppendLog(t.Context(), wl.TI.ID, 0, []byte("first line\n")); err != nil {
		t.Fatal(err)
	}
	// The dead worker's record: its process is gone (another boot).
	runDir := t.TempDir()
	rec := fmt.Sprintf(`{"ti_id": %q, "try_number": 1, "state": "success", "token": %q, "log_offset": 11,
		"log_tail": %q, "worker": {"pid": 1, "start": 1, "boot_id": "a boot long gone"}}`,
		wl.TI.ID, wl.Token, base64.StdEncoding.EncodeToString([]byte("last line\n")))
	if err := os.MkdirAll(filepath.Join(runDir, "task-groups"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "task-groups", wl.TI.ID+"-1.outcome"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: env.Store, Clock: env.Clock})
	if _, err := svc.FailDeadTry(t.Context(), env.TI(t, wl.TI.ID)); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(auth.DefaultExecutionTTL + time.Minute)

	startWorker(t, env, nil, func(w *Worker) { w.RunDir = runDir })
	wait.Until(t, 30*time.Second, "t to be reported", func() bool { return stateOf(t, env, "r1", "t") == core.TISuccess })
	ti := env.TI(t, wl.TI.ID)
	if ti.TryNumber != 1 {
		t.Errorf("t succeeded on try %d, want its first", ti.TryNumber)
	}
	if log := readLog(t, env, ti); log != "first line\nlast line\n" {
		t.Errorf("the try's log = %q, want both lines", log)
	}
	// The record goes once the report's answer came back, a moment after
	// the server committed it.
	wait.Until(t, 10*time.Second, "the outcome record to go after the report", func() bool {
		left, _ := filepath.Glob(filepath.Join(runDir, "task-groups", "*.outcome"))
		return len(left) == 0
	})
}

// loseClaim loses the answer to the first claim that hands out work once
// armed, as when its api-server dies after committing the claim and
// before answering.
type loseClaim struct {
	next  http.RoundTripper
	mu    sync.Mutex
	armed bool
	lost  bool
}

func (l *loseClaim) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/workloads/claim") {
		return resp, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed || l.lost {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var answer execclient.ClaimResponse
	if err != nil || json.Unmarshal(body, &answer) != nil || len(answer.Workloads) == 0 {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, err
	}
	l.lost = true
	return nil, errors.New("the api-server died before answering the claim")
}

// docs/state-machines.md#dead-workers: a claim whose answer was lost is
// returned to its worker by its next claim (the client's retry), so the
// try starts at once (nothing here releases stale claims: without the
// reclaim it would wait for the heartbeat timeout) and runs once — whether
// the lost claim is the worker's first (which always reclaims: a previous
// life's claims) or a later one.
func TestLostClaimAnswerIsReclaimed(t *testing.T) {
	t.Parallel()
	for _, later := range []bool{false, true} {
		t.Run(fmt.Sprintf("later=%v", later), func(t *testing.T) {
			t.Parallel()
			env := execapitest.New(t, execapi.Config{})
			lose := &loseClaim{next: http.DefaultTransport, armed: !later}
			client := workerClientVia(t, env, lose)
			runs := filepath.Join(t.TempDir(), "runs")
			dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "once", Operator: operator.Bash,
				Args: map[string]any{"bash_command": "echo ran >> " + runs}}}}
			startWorker(t, env, nil, func(w *Worker) { w.Client = client })
			if later { // a first run whose claim is answered, then the loss
				env.SeedRun(t, dag, "r0", "")
				wait.Until(t, 30*time.Second, "r0's task to succeed", func() bool { return stateOf(t, env, "r0", "once") == core.TISuccess })
				lose.mu.Lock()
				lose.armed = true
				lose.mu.Unlock()
			}
			_, tis := env.SeedRun(t, dag, "r1", "")

			wait.Until(t, 30*time.Second, "once to succeed", func() bool { return stateOf(t, env, "r1", "once") == core.TISuccess })
			if ti := env.TI(t, tis[0].ID); ti.TryNumber != 1 || ti.WorkerID != "w1" {
				t.Errorf("once ended on try %d by %q, want its first by w1", ti.TryNumber, ti.WorkerID)
			}
			want := "ran\n"
			if later {
				want += "ran\n"
			}
			if b, err := os.ReadFile(runs); err != nil || string(b) != want {
				t.Errorf("the command's runs: %q, %v; want %q", b, err, want)
			}
			lose.mu.Lock()
			defer lose.mu.Unlock()
			if !lose.lost {
				t.Error("no claim answer was lost: the test proved nothing")
			}
		})
	}
}

// An in-process try writes no outcome record while its report is answered
// at once, but one whose report goes unanswered (every api-server away)
// is recorded with its state, for the worker's next life to report; once
// an api-server answers, the record is removed and the try has succeeded
// on its first try, its function having run once.
func TestUnansweredInProcessTryIsRecorded(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	client, outage := cutOffClient(t, env)
	var calls atomic.Int32
	reg := operator.NewRegistry()
	_ = reg.Register("f", func(context.Context, operator.TaskContext) (any, error) { calls.Add(1); return nil, nil })
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "f", Operator: operator.Go, Retries: 3,
		RetryDelay: core.Duration(time.Minute), Args: map[string]any{"function": "f"}}}}
	env.SeedRun(t, dag, "r1", "")
	runDir := t.TempDir()
	dir := filepath.Join(runDir, "task-groups")
	records := func() []taskproc.Outcome {
		held, err := taskproc.Recorded(dir)
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	startWorker(t, env, reg, func(w *Worker) { w.Client, w.RunDir = client, runDir })

	wait.Until(t, 30*time.Second, "the unanswered try's outcome to be recorded", func() bool { return len(records()) == 1 })
	if o := records()[0]; o.State != "success" {
		t.Fatalf("the record: %+v; want the try's state", o)
	}
	outage.mend()
	wait.Until(t, 30*time.Second, "f to be reported", func() bool { return stateOf(t, env, "r1", "f") == core.TISuccess })
	wait.Until(t, 30*time.Second, "the record to be removed", func() bool { return len(records()) == 0 })
	if n := calls.Load(); n != 1 {
		t.Errorf("f ran %d times, want once", n)
	}

	// An answered try leaves nothing behind and writes no record at all:
	// no file in the folder changes.
	before := folderState(t, dir)
	env.SeedRun(t, dag, "r2", "")
	wait.Until(t, 30*time.Second, "f of r2 to succeed", func() bool { return stateOf(t, env, "r2", "f") == core.TISuccess })
	if after := folderState(t, dir); after != before {
		t.Errorf("the run folder changed while an answered in-process try ran:\n%s\n→\n%s", before, after)
	}
}

// folderState describes dir's files: their names, sizes and modification
// times.
func folderState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s\n", e.Name(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	}
	return b.String()
}

// A deferral whose report goes unanswered is sent again until an
// api-server answers, as a final state is: the try is then deferred, its
// function having run once — not given up and left running on the server
// for the worker's reclaim or the try's retry to run a second time.
func TestUnansweredDeferralIsSentAgain(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	drop := &stateOutage{next: http.DefaultTransport, down: 3} // more than the client's own retry
	client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: drop}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	var calls atomic.Int32
	reg := operator.NewRegistry()
	_ = reg.Register("f", func(context.Context, operator.TaskContext) (any, error) {
		calls.Add(1)
		return nil, operator.Defer(core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1h"}`)}})
	})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "f", Operator: operator.Go, Retries: 3,
		RetryDelay: core.Duration(time.Minute), Args: map[string]any{"function": "f"}}}}
	env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, reg, func(w *Worker) { w.Client = client })

	wait.Until(t, 30*time.Second, "f to be deferred", func() bool { return stateOf(t, env, "r1", "f") == core.TIDeferred })
	if n := calls.Load(); n != 1 {
		t.Errorf("f ran %d times, want once", n)
	}
	drop.mu.Lock()
	defer drop.mu.Unlock()
	if drop.down > 0 {
		t.Errorf("%d state reports were still to be lost: the test proved nothing", drop.down)
	}
}

// A shell try's subprocesses read its token from the environment until the
// token is first refreshed; the worker then writes the fresh one where
// WEIR_TASK_TOKEN_FILE points, so a long task keeps API access. A try that
// ends before any refresh writes no token file.
func TestTokenFileWrittenAtTheFirstRefresh(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	checked := filepath.Join(t.TempDir(), "checked")
	script := `test ! -e "$WEIR_TASK_TOKEN_FILE" || exit 3
touch ` + checked + `
for i in $(seq 400); do [ -s "$WEIR_TASK_TOKEN_FILE" ] && break; sleep 0.05; done
t=$(cat "$WEIR_TASK_TOKEN_FILE") && [ -n "$t" ] && [ "$t" != "$WEIR_TASK_TOKEN" ] && echo refreshed`
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "long", Operator: operator.Bash, Args: map[string]any{"bash_command": script}}}}
	_, tis := env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, nil, nil)
	wait.Until(t, 30*time.Second, "the script to find no token file", func() bool { _, err := os.Stat(checked); return err == nil })
	env.Clock.Advance(auth.DefaultExecutionTTL - 10*time.Second)
	wait.Until(t, 30*time.Second, "long to end", func() bool { return stateOf(t, env, "r1", "long").Terminal() })
	ti := env.TI(t, tis[0].ID)
	if ti.State != core.TISuccess {
		t.Fatalf("long = %s, want success (its log: %s)", ti.State, readLog(t, env, ti))
	}
	if log := readLog(t, env, ti); !strings.Contains(log, "refreshed") {
		t.Errorf("the task did not read a refreshed token from the file:\n%s", log)
	}
}
