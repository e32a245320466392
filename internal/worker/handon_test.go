package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// loseHandedOn loses the first answer of a state report that claimed the
// worker's next try (the api-server died after its commit).
type loseHandedOn struct {
	next http.RoundTripper
	mu   sync.Mutex
	lost string // the id of the try whose claim was lost
}

func (l *loseHandedOn) RoundTrip(r *http.Request) (*http.Response, error) {
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

// A try's end hands its slot on to the next queued try (ADR 0032); when
// the answer that carried it is lost, the report's retry finds the try
// ended (409), and the worker's next claim reclaims the try it was given,
// which then runs once, at once (without the reclaim it would wait for the
// heartbeat timeout).
func TestLostHandedOnTryIsReclaimed(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	lose := &loseHandedOn{next: http.DefaultTransport}
	client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: lose}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	var mu sync.Mutex
	ran := map[string]int{}
	reg := operator.NewRegistry()
	_ = reg.Register("f", func(_ context.Context, tc operator.TaskContext) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		ran[tc.TaskID]++
		return nil, nil
	})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "one", Operator: operator.Go, Args: map[string]any{"function": "f"}},
		{TaskID: "two", Operator: operator.Go, Args: map[string]any{"function": "f"}},
	}}
	env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, reg, func(w *Worker) { w.Client, w.Concurrency = client, 1 })

	wait.Until(t, 30*time.Second, "both tasks to succeed", func() bool {
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
