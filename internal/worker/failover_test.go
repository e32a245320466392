package worker

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/service"
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
	if err == nil && r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/run") {
		c.mu.Lock()
		c.cut = !c.mended
		c.mu.Unlock()
	}
	return resp, err
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
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	outage := &cutOff{next: http.DefaultTransport}
	client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: outage}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
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
