package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// scrape GETs a /metrics endpoint and returns its text.
func scrape(t *testing.T, url string) (string, error) {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // a loopback URL the test built
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitSeries scrapes url until every series prefix in want appears.
func waitSeries(t *testing.T, what, url string, want ...string) {
	t.Helper()
	waitFor(t, what+" to export "+strings.Join(want, ", "), func() (bool, string) {
		text, err := scrape(t, url)
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, w := range want {
			if !strings.Contains(text, "\n"+w) {
				missing = append(missing, w)
			}
		}
		return len(missing) == 0, "missing " + strings.Join(missing, ", ")
	})
}

// TestMetrics scrapes /metrics of each role: standalone's api-server
// port (every role of the process), then a scheduler and a worker that
// serve them on [metrics] listen.
func TestMetrics(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "hello.yaml"), "dag_id: hello\nschedule: null\ntasks:\n  - task_id: say\n    operator: bash\n    bash_command: echo hello\n")
	sa := startStandalone(t, home, dags)
	sa.api.WaitDAG("hello")
	sa.api.Trigger("hello", "r1", nil)
	sa.api.WaitRunSuccess("hello", "r1")
	waitSeries(t, "standalone", sa.api.Base()+"/metrics",
		`weir_http_request_duration_seconds_count{code="200",handler="GET /api/v2/dags/{dag_id}",method="GET"}`,
		`weir_scheduler_loop_duration_seconds_count{outcome="ok"}`,
		`weir_task_instances{queue="default",state="success"} 1`,
		`weir_queue_depth{queue="default"} 0`,
		`weir_triggers 0`,
		`weir_task_instance_duration_seconds_count{state="success"} 1`,
		`go_sql_open_connections{db_name="weir"}`,
		`go_goroutines`)

	// A scheduler and a worker, each on its own [metrics] listen.
	schedHome := t.TempDir()
	mustWeir(t, nil, "db", "migrate", "--home", schedHome)
	port := weirtest.FreePort(t)
	startProc(t, "scheduler", []string{"WEIR__METRICS__LISTEN=127.0.0.1:" + strconv.Itoa(port)}, "scheduler", "--home", schedHome, "--dags", dags)
	waitSeries(t, "the scheduler", "http://127.0.0.1:"+strconv.Itoa(port)+"/metrics",
		`weir_scheduler_loop_duration_seconds_count{outcome="ok"}`, `go_sql_open_connections{db_name="weir"}`, `weir_triggers 0`)

	cred := strings.TrimSpace(mustWeir(t, nil, "tokens", "create", "--worker", "wm", "--home", home))
	wport := weirtest.FreePort(t)
	startProc(t, "worker", []string{"WEIR__METRICS__LISTEN=127.0.0.1:" + strconv.Itoa(wport)}, "worker", "--home", t.TempDir(),
		"--api-url", sa.api.Base(), "--token", cred, "--name", "wm")
	waitSeries(t, "the worker", "http://127.0.0.1:"+strconv.Itoa(wport)+"/metrics", `go_goroutines`, `process_cpu_seconds_total`)
}
