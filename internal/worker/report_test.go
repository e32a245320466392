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

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// stateOutage stands between the worker and the api-server: the first
// `down` state reports never reach the server, as during an outage longer
// than the client's own retries. Other requests pass.
type stateOutage struct {
	next http.RoundTripper
	mu   sync.Mutex
	down int
}

func (o *stateOutage) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/state") {
		o.mu.Lock()
		lost := o.down > 0
		o.down--
		o.mu.Unlock()
		if lost {
			return nil, errors.New("api-server unreachable")
		}
	}
	return o.next.RoundTrip(r)
}

// A try whose command finished while the api-server was unreachable is
// reported once the server is back: it ends success on its first try, its
// command having run once, instead of staying running, unreported, until
// its heartbeat timeout would run it again.
func TestWorkerReportsThroughAnOutage(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	tok, err := env.Tokens.IssueWorker("w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	outage := &stateOutage{next: http.DefaultTransport, down: 8}
	client := execclient.NewClient(env.URL, tok, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: outage}, Retries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	runs := filepath.Join(t.TempDir(), "runs")
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "once", Operator: operator.Bash, Retries: 3,
		Args: map[string]any{"bash_command": "echo ran >> " + runs}}}}
	env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, nil, func(w *Worker) { w.Client = client })

	wait.Until(t, 30*time.Second, "once to be reported", func() bool { return stateOf(t, env, "r1", "once") == core.TISuccess })
	ti, err := env.Store.TaskInstanceGetByKey(t.Context(), "d", "r1", "once", core.NoMapIndex)
	if err != nil {
		t.Fatal(err)
	}
	if ti.TryNumber != 1 {
		t.Errorf("once succeeded on try %d, want its first", ti.TryNumber)
	}
	if b, err := os.ReadFile(runs); err != nil || string(b) != "ran\n" {
		t.Errorf("the command's runs: %q, %v; want one", b, err)
	}
	outage.mu.Lock()
	defer outage.mu.Unlock()
	if outage.down > 0 {
		t.Errorf("%d reports were still to be lost: the outage did not outlast the client's retries", outage.down)
	}
}
