package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// Requests are timed under the pattern of the innermost mux that served
// them (bounded labels: never the raw path), with method and status.
func TestInstrumentHTTPLabelsByPattern(t *testing.T) {
	t.Parallel()
	m := New()
	inner := http.NewServeMux()
	inner.HandleFunc("GET /api/v2/dags/{dag_id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	outer := http.NewServeMux()
	outer.Handle("/api/v2/", inner)
	srv := httptest.NewServer(m.InstrumentHTTP(outer))
	defer srv.Close()
	for _, p := range []string{"/api/v2/dags/a", "/api/v2/dags/b", "/nowhere"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	text := scrape(t, m.Handler())
	for _, want := range []string{
		`weir_http_request_duration_seconds_count{code="404",handler="GET /api/v2/dags/{dag_id}",method="GET"} 2`,
		`weir_http_request_duration_seconds_count{code="404",handler="other",method="GET"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s; weir_http lines:\n%s", want, grepLines(text, "weir_http_request_duration_seconds_count"))
		}
	}
	if strings.Contains(text, "/api/v2/dags/a") {
		t.Error("a raw path became a label")
	}
}

func TestObservations(t *testing.T) {
	t.Parallel()
	m := New()
	m.ObserveSchedulerLoop(10*time.Millisecond, nil)
	m.ObserveSchedulerLoop(time.Second, errors.New("db down"))
	m.ObserveTryFinished(core.TISuccess, 3*time.Second)
	var none *Metrics // a nil Metrics records nothing and does not panic
	none.ObserveSchedulerLoop(time.Second, nil)
	none.ObserveTryFinished(core.TIFailed, time.Second)
	text := scrape(t, m.Handler())
	for _, want := range []string{
		`weir_scheduler_loop_duration_seconds_count{outcome="ok"} 1`,
		`weir_scheduler_loop_duration_seconds_count{outcome="error"} 1`,
		`weir_task_instance_duration_seconds_sum{state="success"} 3`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The per-role series carry bounded labels: states, types, sources,
// operations and outcomes read from the error's sentinel.
func TestRoleSeries(t *testing.T) {
	t.Parallel()
	m := New()
	m.ObserveSchedulerPass(2, 5)
	m.ObserveSchedulerPass(0, 0)
	m.ObserveTryFinished(core.TISuccess, time.Second)
	m.ObserveTryFinished(core.TISuccess, time.Second)
	m.TriggerFired("timedelta", 3)
	m.TasksQueued("try_end", 2)
	m.TasksQueued("try_end", 1)
	m.TriggerFailed("http")
	m.AssetEventCreated(core.AssetSourceWatcher)
	m.ObserveStateOp("get", core.StateAsset, time.Millisecond, fmt.Errorf("get key: %w", core.ErrNotFound))
	m.ObserveStateOp("set", core.StateTask, time.Millisecond, nil)
	m.AddWorker(func() (int, int) { return 4, 1 })
	m.AddWorker(func() (int, int) { return 2, 2 })
	var none *Metrics
	none.ObserveSchedulerPass(1, 1)
	none.TriggerFired("x", 1)
	none.TasksQueued("scheduler", 1)
	none.TriggerFailed("x")
	none.AssetEventCreated("api")
	none.ObserveStateOp("get", core.StateTask, 0, nil)
	none.AddWorker(func() (int, int) { return 1, 0 })
	text := scrape(t, m.Handler())
	for _, want := range []string{
		"weir_scheduler_pass_dag_runs_created_sum 2",
		"weir_scheduler_pass_dag_runs_created_count 2",
		"weir_scheduler_pass_task_instances_queued_sum 5",
		`weir_task_instances_queued_total{by="try_end"} 3`,
		`weir_scheduler_pass_task_instances_queued_bucket{le="0"} 1`,
		`weir_task_instances_finished_total{state="success"} 2`,
		`weir_trigger_events_total{type="timedelta"} 3`,
		`weir_trigger_failures_total{type="http"} 1`,
		`weir_asset_events_created_total{source="watcher"} 1`,
		`weir_state_store_operations_total{kind="asset",operation="get",outcome="not_found"} 1`,
		`weir_state_store_operations_total{kind="task",operation="set",outcome="ok"} 1`,
		`weir_state_store_operation_duration_seconds_count{kind="task",operation="set"} 1`,
		"weir_worker_slots 6", "weir_worker_free_slots 3", "weir_worker_running_tries 3",
	} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A process without a worker exports no worker series.
func TestNoWorkerNoWorkerSeries(t *testing.T) {
	t.Parallel()
	if text := scrape(t, New().Handler()); strings.Contains(text, "weir_worker_") {
		t.Errorf("a process without workers exports %s", grepLines(text, "weir_worker_"))
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		nil:                                   "ok",
		fmt.Errorf("x: %w", core.ErrNotFound): "not_found",
		fmt.Errorf("x: %w", core.ErrInvalid):  "invalid",
		core.ErrConflict:                      "conflict",
		core.ErrTooLarge:                      "too_large",
		core.ErrForbidden:                     "forbidden",
		core.ErrUnavailable:                   "unavailable",
		errors.New("disk full"):               "error",
	} {
		if got := Outcome(err); got != want {
			t.Errorf("Outcome(%v) = %s, want %s", err, got, want)
		}
	}
}
