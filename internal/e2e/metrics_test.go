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

// seriesValue returns the value of the sample named exactly sample (name
// and labels) in a scrape's text, or -1.
func seriesValue(text, sample string) float64 {
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, sample+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// waitAtLeast scrapes url until sample's value reaches least.
func waitAtLeast(t *testing.T, what, url, sample string, least float64) {
	t.Helper()
	waitFor(t, what+" to export "+sample+" >= "+strconv.FormatFloat(least, 'g', -1, 64), func() (bool, string) {
		text, err := scrape(t, url)
		if err != nil {
			return false, err.Error()
		}
		v := seriesValue(text, sample)
		return v >= least, "value " + strconv.FormatFloat(v, 'g', -1, 64)
	})
}

// observedDags are the DAGs whose run feeds every series: a sensor on a
// timedelta trigger (a trigger event), then a bash task that writes task
// state and updates the orders asset (a state-store operation, a task's
// asset event), which makes the scheduler create a consumer's
// asset-triggered run.
const observedDags = `dag_id: observed
schedule: null
assets:
  - name: orders
    uri: file:///tmp/weir-metrics/orders.csv
tasks:
  - task_id: wait
    operator: sensor
    trigger: {type: timedelta, delta: 0s}
  - task_id: load
    operator: bash
    depends_on: wait
    bash_command: |
      weir task-state set progress '{"done": 1}'
    outlets: [orders]
`

const consumerDag = `dag_id: consumer
schedule: [orders]
assets:
  - name: orders
    uri: file:///tmp/weir-metrics/orders.csv
tasks:
  - task_id: summarize
    operator: bash
    bash_command: echo consumed
`

// TestMetrics scrapes /metrics of each role: standalone's api-server
// port (every role of the process), then a scheduler, a triggerer and a
// worker that serve them on [metrics] listen, and an api-server on its
// own port.
func TestMetrics(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "hello.yaml"), "dag_id: hello\nschedule: null\ntasks:\n  - task_id: say\n    operator: bash\n    bash_command: echo hello\n")
	writeFile(t, filepath.Join(dags, "observed.yaml"), observedDags)
	writeFile(t, filepath.Join(dags, "consumer.yaml"), consumerDag)
	sa := startStandalone(t, home, dags)
	sa.api.WaitDAG("hello")
	sa.api.WaitDAG("observed")
	sa.api.WaitDAG("consumer")
	sa.api.Trigger("hello", "r1", nil)
	sa.api.WaitRunSuccess("hello", "r1")
	sa.api.Trigger("observed", "r1", nil)
	sa.api.WaitRunSuccess("observed", "r1")
	url := sa.api.Base() + "/metrics"
	waitSeries(t, "standalone", url,
		`weir_http_request_duration_seconds_count{code="200",handler="GET /api/v2/dags/{dag_id}",method="GET"}`,
		`weir_scheduler_loop_duration_seconds_count{outcome="ok"}`,
		`weir_queue_depth{queue="default"} 0`,
		`weir_triggers 0`,
		`weir_task_instance_duration_seconds_count{state="success"}`,
		`weir_trigger_events_total{type="timedelta"} 1`,
		`weir_asset_events_created_total{source="task"} 1`,
		`weir_state_store_operations_total{kind="task",operation="set",outcome="ok"} 1`,
		`weir_state_store_operation_duration_seconds_count{kind="task",operation="set"} 1`,
		`weir_scheduler_pass_dag_runs_created_sum 1`, // the consumer's asset-triggered run
		`weir_task_instances{queue="default",state="success"} 4`,
		`weir_worker_running_tries 0`,
		`go_sql_open_connections{db_name="weir"}`,
		`go_goroutines`)
	// say, wait, load and summarize each reported success (the sensor once
	// resumed) and were queued (the sensor twice: to start, and to resume),
	// by the scheduler or by the success of the task before (try_end).
	waitAtLeast(t, "standalone", url, `weir_task_instances_finished_total{state="success"}`, 4)
	text, err := scrape(t, url)
	if err != nil {
		t.Fatal(err)
	}
	byScheduler, byTryEnd := seriesValue(text, `weir_task_instances_queued_total{by="scheduler"}`),
		seriesValue(text, `weir_task_instances_queued_total{by="try_end"}`)
	if byScheduler < 1 || byTryEnd < 1 || byScheduler+byTryEnd < 4 {
		t.Errorf("task instances queued by the scheduler %v, by try ends %v; want at least 4, some by each (wait's success queues load)", byScheduler, byTryEnd)
	}
	if slots, free := seriesValue(text, "weir_worker_slots"), seriesValue(text, "weir_worker_free_slots"); slots <= 0 || free != slots {
		t.Errorf("an idle worker has %v slots, %v free; want every slot free", slots, free)
	}

	// A scheduler and a triggerer, each on its own [metrics] listen.
	schedHome := t.TempDir()
	mustWeir(t, nil, "db", "migrate", "--home", schedHome)
	port := weirtest.FreePort(t)
	startProc(t, "scheduler", []string{"WEIR__METRICS__LISTEN=127.0.0.1:" + strconv.Itoa(port)}, "scheduler", "--home", schedHome, "--dags", dags)
	waitSeries(t, "the scheduler", "http://127.0.0.1:"+strconv.Itoa(port)+"/metrics",
		`weir_scheduler_loop_duration_seconds_count{outcome="ok"}`, `weir_scheduler_pass_task_instances_queued_count`,
		`go_sql_open_connections{db_name="weir"}`, `weir_triggers 0`)
	tport := weirtest.FreePort(t)
	startProc(t, "triggerer", []string{"WEIR__METRICS__LISTEN=127.0.0.1:" + strconv.Itoa(tport)}, "triggerer", "--home", schedHome)
	waitSeries(t, "the triggerer", "http://127.0.0.1:"+strconv.Itoa(tport)+"/metrics", `weir_triggers 0`, `go_goroutines`)

	// An api-server on its own serves them on its port.
	aport := strconv.Itoa(weirtest.FreePort(t))
	startProc(t, "api-server", []string{"WEIR__API__PORT=" + aport}, "api-server", "--home", schedHome)
	abase := "http://127.0.0.1:" + aport
	newClient(t, abase, "").WaitHealthy()
	waitSeries(t, "the api-server", abase+"/metrics",
		`weir_http_request_duration_seconds_count{code="200",handler="`, `weir_triggers 0`, `go_sql_open_connections{db_name="weir"}`)

	// A worker: its slots.
	cred := strings.TrimSpace(mustWeir(t, nil, "tokens", "create", "--worker", "wm", "--home", home))
	wport := weirtest.FreePort(t)
	startProc(t, "worker", []string{"WEIR__METRICS__LISTEN=127.0.0.1:" + strconv.Itoa(wport), "WEIR__WORKERS__CONCURRENCY=3"}, "worker", "--home", t.TempDir(),
		"--api-url", sa.api.Base(), "--token", cred, "--name", "wm")
	waitSeries(t, "the worker", "http://127.0.0.1:"+strconv.Itoa(wport)+"/metrics", `go_goroutines`, `process_cpu_seconds_total`,
		`weir_worker_slots 3`, `weir_worker_free_slots 3`, `weir_worker_running_tries 0`)
}
