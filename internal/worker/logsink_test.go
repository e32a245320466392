package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// flakyLogs stands between the worker and the api-server: the answer to
// the first log chunk is lost after the server stored it, and the next two
// log requests never reach the server. Other requests pass.
type flakyLogs struct {
	next      http.RoundTripper
	mu        sync.Mutex
	n         int
	gaveUp    chan struct{} // closed when the second request has failed
	closeOnce sync.Once
}

func (f *flakyLogs) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/logs") {
		return f.next.RoundTrip(r)
	}
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	switch n {
	case 1:
		resp, err := f.next.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		_ = resp.Body.Close()
		return nil, errors.New("connection reset after the chunk was sent")
	case 2, 3:
		if n == 2 {
			defer f.closeOnce.Do(func() { close(f.gaveUp) })
		}
		return nil, errors.New("api-server unreachable")
	}
	return f.next.RoundTrip(r)
}

// A remote worker's log survives a lost answer and an unreachable
// api-server: the chunk whose answer was lost is not stored twice, the
// chunk that could not be delivered is sent again with the next, and the
// log has every line once, in order.
func TestWorkerLogShippingIsIdempotent(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	flaky := &flakyLogs{next: http.DefaultTransport, gaveUp: make(chan struct{})}
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: flaky}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})

	const lines = 6000 // 100 bytes each: the first half is more than logFlushSize
	line := func(i int) string { return fmt.Sprintf("line %04d %s\n", i, strings.Repeat("x", 89)) }
	reg := operator.NewRegistry()
	_ = reg.Register("chatty", func(ctx context.Context, tc operator.TaskContext) (any, error) {
		for i := range lines / 2 {
			_, _ = fmt.Fprint(tc.Log, line(i))
		}
		select { // the first chunk has been sent, its answer lost, and its retry failed
		case <-flaky.gaveUp:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		for i := lines / 2; i < lines; i++ {
			_, _ = fmt.Fprint(tc.Log, line(i))
		}
		return nil, nil
	})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "chatty", Operator: operator.Go, Args: map[string]any{"function": "chatty"}}}}
	_, tis := env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, reg, func(w *Worker) { w.Client = client })
	wait.Until(t, 30*time.Second, "chatty to finish", func() bool { return stateOf(t, env, "r1", "chatty") == core.TISuccess })

	var want strings.Builder
	for i := range lines {
		want.WriteString(line(i))
	}
	got := readLog(t, env, &tis[0])
	start := strings.Index(got, line(0))
	end := strings.LastIndex(got, line(lines-1))
	if start < 0 || end < 0 || got[start:end+len(line(lines-1))] != want.String() {
		t.Fatalf("log has %d bytes; lines 0..%d are not there once each, in order (first at %d, last at %d)", len(got), lines-1, start, end)
	}
	if n := strings.Count(got, "weir: chatty try 1"); n != 1 {
		t.Fatalf("the start line appears %d times", n)
	}
}

// countLogs counts the requests that ship log chunks, and loses the answer
// to the first state report after the server has handled it.
type countLogs struct {
	next       http.RoundTripper
	mu         sync.Mutex
	chunks     int
	loseAnswer bool
}

func (c *countLogs) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/logs"):
		c.chunks++
	case r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/state") && c.loseAnswer && err == nil:
		c.loseAnswer = false
		_ = resp.Body.Close()
		return nil, errors.New("connection reset after the state report was sent")
	}
	return resp, err
}

// The end of a try's log rides its final state report: a short try ships
// no log chunk of its own, yet its log is complete once it is seen ended —
// also when the report's answer is lost and it is sent again (the tail is
// stored once). A tail longer than a report carries is shipped before it.
func TestTheLogsEndRidesTheStateReport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		bytes      int // logged by the task
		loseAnswer bool
		chunks     int // POST .../logs requests
	}{
		{name: "short", bytes: 100, chunks: 0},
		{name: "short, the report's answer lost", bytes: 100, loseAnswer: true, chunks: 0},
		{name: "longer than a report carries", bytes: execclient.MaxReportedLogTail + 1000, chunks: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := execapitest.New(t, execapi.Config{})
			counter := &countLogs{next: http.DefaultTransport, loseAnswer: tc.loseAnswer}
			tok, err := env.Tokens.IssueWorker("w1", 0)
			if err != nil {
				t.Fatal(err)
			}
			client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
				HTTPClient: &http.Client{Transport: counter}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
			body := strings.Repeat("x", tc.bytes-1) + "\n"
			reg := operator.NewRegistry()
			_ = reg.Register("say", func(_ context.Context, tc operator.TaskContext) (any, error) {
				_, _ = fmt.Fprint(tc.Log, body)
				return nil, nil
			})
			dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "say", Operator: operator.Go, Args: map[string]any{"function": "say"}}}}
			_, tis := env.SeedRun(t, dag, "r1", "")
			startWorker(t, env, reg, func(w *Worker) { w.Client = client })
			wait.Until(t, 30*time.Second, "say to succeed", func() bool { return stateOf(t, env, "r1", "say") == core.TISuccess })

			log := readLog(t, env, &tis[0]) // complete as soon as the try is seen ended
			if strings.Count(log, body) != 1 || !strings.HasSuffix(log, "weir: try ended success\n") || strings.Count(log, "try ended") != 1 {
				t.Errorf("log (%d bytes) does not hold the task's output once and then its end:\n%.300s", len(log), log)
			}
			counter.mu.Lock()
			defer counter.mu.Unlock()
			if counter.chunks != tc.chunks {
				t.Errorf("%d log chunks shipped on their own, want %d", counter.chunks, tc.chunks)
			}
		})
	}
}

// The api-server's copy of the log lost what the worker shipped (a folder
// not shared between api-servers, a removed file): the state report's tail
// is refused (log_gap), so the worker ships it from the stored end and
// reports the state alone. The try succeeds and its log holds the end once.
func TestTheLogsEndAfterAGap(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	counter := &countLogs{next: http.DefaultTransport}
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: counter}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	var logPath string
	reg := operator.NewRegistry()
	_ = reg.Register("lose", func(ctx context.Context, tc operator.TaskContext) (any, error) {
		_, _ = fmt.Fprint(tc.Log, "first\n")
		for { // shipped by the sink's timer, then lost
			if b, err := os.ReadFile(logPath); err == nil && strings.Contains(string(b), "first\n") {
				break
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		if err := os.Remove(logPath); err != nil {
			return nil, err
		}
		_, _ = fmt.Fprint(tc.Log, "second\n")
		return nil, nil
	})
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "lose", Operator: operator.Go, Args: map[string]any{"function": "lose"}}}}
	_, tis := env.SeedRun(t, dag, "r1", "")
	ti := tis[0]
	ti.TryNumber = 1
	if logPath, err = tasklog.Path(env.LogDir, tasklog.KeyOf(&ti)); err != nil {
		t.Fatal(err)
	}
	startWorker(t, env, reg, func(w *Worker) { w.Client = client })
	wait.Until(t, 30*time.Second, "lose to succeed", func() bool { return stateOf(t, env, "r1", "lose") == core.TISuccess })

	log := readLog(t, env, &ti)
	if !strings.HasPrefix(log, "second\n") || strings.Count(log, "second\n") != 1 || !strings.HasSuffix(log, "weir: try ended success\n") {
		t.Errorf("log after the gap = %q; want the lines after it once, then the end", log)
	}
}
