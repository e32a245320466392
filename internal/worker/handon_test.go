package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// loseHandedOn loses the first answer of a state report that claimed the
// worker's next try (the api-server died after its commit). With hold, it
// holds the worker's second task claim (a free slot's long poll) until its
// context ends.
type loseHandedOn struct {
	next   http.RoundTripper
	hold   bool
	claims atomic.Int32
	mu     sync.Mutex
	lost   string // the id of the try whose claim was lost
}

func (l *loseHandedOn) RoundTrip(r *http.Request) (*http.Response, error) {
	if l.hold && strings.HasSuffix(r.URL.Path, "/workloads/claim") && claimsTasks(r) && l.claims.Add(1) == 2 {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	resp, err := l.next.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/state") {
		return resp, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var answer execclient.StateResponse
	if l.lost != "" || err != nil || json.Unmarshal(body, &answer) != nil || answer.Next == nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, err
	}
	l.lost = answer.Next.TI.ID
	return nil, errors.New("the api-server died before answering the report")
}

// workerClientVia is worker w1's client of env through rt, retrying once
// at once.
func workerClientVia(t *testing.T, env *execapitest.Env, rt http.RoundTripper) *execclient.Client {
	t.Helper()
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	return execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: rt}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
}

// A try's end hands its slot on to the next queued try (ADR 0032); when
// the answer that carried it is lost, the report's retry finds the try
// ended (409), and the worker's next claim reclaims the try it was given,
// which then runs once, at once (without the reclaim it would wait for the
// heartbeat timeout). With a free slot, that claim is a long poll already
// in flight (ClaimWait, a minute here): it is cut short for the reclaim.
func TestLostHandedOnTryIsReclaimed(t *testing.T) {
	t.Parallel()
	for _, slots := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d slots", slots), func(t *testing.T) {
			t.Parallel()
			lostHandedOnIsReclaimed(t, slots)
		})
	}
}

func lostHandedOnIsReclaimed(t *testing.T, slots int) {
	env := execapitest.New(t, execapi.Config{})
	lose := &loseHandedOn{next: http.DefaultTransport, hold: slots > 1}
	client := workerClientVia(t, env, lose)
	var mu sync.Mutex
	ran := map[string]int{}
	oneRuns, releaseOne := make(chan struct{}), make(chan struct{})
	reg := operator.NewRegistry()
	_ = reg.Register("f", func(_ context.Context, tc operator.TaskContext) (any, error) {
		mu.Lock()
		ran[tc.TaskID]++
		mu.Unlock()
		if tc.TaskID == "one" {
			close(oneRuns)
			<-releaseOne
		}
		return nil, nil
	})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "one", Operator: operator.Go, Args: map[string]any{"function": "f"}},
		{TaskID: "two", Operator: operator.Go, Args: map[string]any{"function": "f"}},
	}}
	_, tis := env.SeedRun(t, dag, "r1", core.TIScheduled)
	ids := map[string]string{}
	for _, ti := range tis {
		ids[ti.TaskID] = ti.ID
	}
	queue := func(task string) { queueQuietly(t, env, ids[task]) }
	queue("one")
	startWorker(t, env, reg, func(w *Worker) { w.Client, w.Concurrency = client, slots })
	<-oneRuns
	queue("two") // without a wake-up: one's end takes it
	close(releaseOne)

	wait.Until(t, 20*time.Second, "both tasks to succeed", func() bool {
		return stateOf(t, env, "r1", "one") == core.TISuccess && stateOf(t, env, "r1", "two") == core.TISuccess
	})
	lose.mu.Lock()
	lost := lose.lost
	lose.mu.Unlock()
	if lost == "" {
		t.Fatal("no answer carrying a next try was lost: the test proved nothing")
	}
	if ti := env.TI(t, lost); ti.TryNumber != 1 || ti.WorkerID != "w1" {
		t.Errorf("the lost try ended on try %d by %q, want its first by w1", ti.TryNumber, ti.WorkerID)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran["one"] != 1 || ran["two"] != 1 {
		t.Errorf("runs = %v, want each task once", ran)
	}
}

// racingReclaim fails the worker's second claim, so that the client sends
// it again as a reclaim, and holds that reclaim until gate closes; it then
// holds the reclaim's answer, when it returns the handed-on try b running,
// until b's own report was answered: an answer slower than a short try.
type racingReclaim struct {
	next      http.RoundTripper
	claims    atomic.Int32
	reclaim   chan struct{} // closed when the reclaim is held
	gate      chan struct{} // closed by the test: the reclaim goes on
	returned  chan struct{} // closed when its answer holds b
	bReported chan struct{} // closed when b's report was answered
	after     chan struct{} // closed when the worker claims after it
	bID       atomic.Value
	once      [4]sync.Once
}

func (r *racingReclaim) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/workloads/claim") || !claimsTasks(req) {
		resp, err := r.next.RoundTrip(req)
		if id, _ := r.bID.Load().(string); err == nil && id != "" && strings.HasSuffix(req.URL.Path, "/"+id+"/state") {
			r.once[0].Do(func() { close(r.bReported) })
		}
		return resp, err
	}
	switch r.claims.Add(1) {
	case 2:
		return nil, errors.New("connection reset")
	case 3:
		close(r.reclaim)
		<-r.gate
	case 4:
		r.once[1].Do(func() { close(r.after) })
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var answer execclient.ClaimResponse
	if json.Unmarshal(body, &answer) == nil {
		for _, wl := range answer.Workloads {
			if wl.TI.TaskID == "b" && wl.TI.State == core.TIRunning {
				r.once[2].Do(func() { close(r.returned) })
				<-r.bReported
			}
		}
	}
	return resp, nil
}

// queueQuietly queues the scheduled try id without waking the workers, as
// the store does below a try's end that then hands it on.
func queueQuietly(t *testing.T, env *execapitest.Env, id string) {
	t.Helper()
	if _, err := env.Store.TaskInstanceSetState(t.Context(), &store.TaskInstanceSetStateParams{IDs: []string{id},
		From: []core.TIState{core.TIScheduled}, To: core.TIQueued, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

// claimsTasks reports whether a claim asks for tasks (not callbacks alone).
func claimsTasks(req *http.Request) bool {
	body, _ := io.ReadAll(req.Body)
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	var c execclient.ClaimRequest
	return json.Unmarshal(body, &c) == nil && c.Limit > 0
}

// A reclaim sent before a try was handed on (a failed claim is sent again
// as one) answers that try, running and not among the tries it lists as
// held; when the answer comes after the try's run ended, the worker does
// not run it a second time.
func TestReclaimDoesNotRerunAHandedOnTry(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	rt := &racingReclaim{next: http.DefaultTransport, reclaim: make(chan struct{}), gate: make(chan struct{}),
		returned: make(chan struct{}), bReported: make(chan struct{}), after: make(chan struct{})}
	client := workerClientVia(t, env, rt)
	releaseA, bStarted, releaseB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var bRuns atomic.Int32
	reg := operator.NewRegistry()
	_ = reg.Register("a", func(context.Context, operator.TaskContext) (any, error) { <-releaseA; return nil, nil })
	_ = reg.Register("b", func(context.Context, operator.TaskContext) (any, error) {
		if bRuns.Add(1) == 1 {
			close(bStarted)
			<-releaseB
		}
		return nil, nil
	})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "a", Operator: operator.Go, Args: map[string]any{"function": "a"}},
		{TaskID: "b", Operator: operator.Go, Args: map[string]any{"function": "b"}},
	}}
	_, tis := env.SeedRun(t, dag, "r1", core.TIScheduled)
	ids := map[string]string{}
	for _, ti := range tis {
		ids[ti.TaskID] = ti.ID
	}
	rt.bID.Store(ids["b"])
	queue := func(task string) { queueQuietly(t, env, ids[task]) }
	queue("a")
	startWorker(t, env, reg, func(w *Worker) { w.Client, w.Concurrency = client, 2 })

	<-rt.reclaim // a runs; the other slot's claim failed and is sent again as a reclaim, held here
	queue("b")   // without a wake-up: a's end takes b
	close(releaseA)
	<-bStarted
	close(rt.gate) // the reclaim finds b running, unheld
	<-rt.returned
	close(releaseB) // b ends; then the reclaim's answer comes
	<-rt.after      // the worker handled that answer and claims again
	wait.Until(t, 10*time.Second, "b to succeed", func() bool { return stateOf(t, env, "r1", "b") == core.TISuccess })
	if n := bRuns.Load(); n != 1 {
		t.Errorf("b ran %d times, want once", n)
	}
}
