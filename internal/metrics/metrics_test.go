package metrics

import (
	"compress/gzip"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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
	m.AddScheduler()
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
	none.AddScheduler()
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

// The whole scrape is valid Prometheus text, as Prometheus's own parser
// reads it: one family per name (two database pools included), the types
// and help Weir gives, label values escaped, histograms whose count is
// their +Inf bucket, and the Go runtime, process and pool series
// dashboards expect. A scraper that accepts gzip gets it.
func TestScrapeIsValidPrometheusText(t *testing.T) {
	t.Parallel()
	m := New()
	m.ObserveStateOp("get", core.StateTask, 2*time.Millisecond, nil)
	m.ObserveStateOp("get", core.StateTask, 30*time.Second, nil) // past the last bucket
	m.TriggerFired("quote\"back\\slash\nline", 2)
	m.AddWorker(func() (int, int) { return 4, 1 })
	db := sql.OpenDB(noDriver{})
	m.AddDB("weir", db)
	m.AddDB("other", db)
	text := scrape(t, m.Handler())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus cannot parse the scrape: %v\n%s", err, text)
	}
	for name, typ := range map[string]dto.MetricType{
		"weir_state_store_operation_duration_seconds": dto.MetricType_HISTOGRAM, "weir_trigger_events_total": dto.MetricType_COUNTER,
		"weir_worker_slots": dto.MetricType_GAUGE, "go_gc_duration_seconds": dto.MetricType_SUMMARY, "go_goroutines": dto.MetricType_GAUGE,
		"go_memstats_alloc_bytes_total": dto.MetricType_COUNTER, "process_cpu_seconds_total": dto.MetricType_COUNTER,
		"process_resident_memory_bytes": dto.MetricType_GAUGE, "process_start_time_seconds": dto.MetricType_GAUGE,
		"process_open_fds": dto.MetricType_GAUGE, "go_sql_open_connections": dto.MetricType_GAUGE,
		"process_network_receive_bytes_total": dto.MetricType_COUNTER,
	} {
		f := fams[name]
		if f == nil || f.GetType() != typ || f.GetHelp() == "" {
			t.Errorf("family %s = %v, want a %v with help", name, f, typ)
		}
	}
	if n := len(fams["go_sql_open_connections"].GetMetric()); n != 2 {
		t.Errorf("go_sql_open_connections has %d series, want one per pool", n)
	}
	h := fams["weir_state_store_operation_duration_seconds"].GetMetric()[0].GetHistogram()
	buckets := h.GetBucket()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 30.002 || buckets[0].GetCumulativeCount() != 0 ||
		buckets[len(buckets)-2].GetCumulativeCount() != 1 || buckets[len(buckets)-1].GetCumulativeCount() != 2 {
		t.Errorf("histogram = %v; want 2 observations summing to 30.002, one within 2.5 s, both within +Inf", h)
	}
	trig := fams["weir_trigger_events_total"].GetMetric()[0]
	if trig.GetLabel()[0].GetValue() != "quote\"back\\slash\nline" || trig.GetCounter().GetValue() != 2 {
		t.Errorf("escaped label read back as %v", trig)
	}
	start := fams["process_start_time_seconds"].GetMetric()[0].GetGauge().GetValue()
	if since := time.Since(time.Unix(int64(start), 0)); since < -2*time.Second || since > time.Hour {
		t.Errorf("process_start_time_seconds %v is %v ago", start, since)
	}

	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("Vary") != "Accept-Encoding" || !strings.Contains(string(unzipped), "# TYPE weir_worker_slots gauge") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("gzip scrape: headers %v, body %.200s", rec.Header(), unzipped)
	}
}

// noDriver is a database/sql connector that never connects: a pool whose
// statistics are all zero.
type noDriver struct{}

func (noDriver) Connect(context.Context) (driver.Conn, error) { return nil, errors.New("no database") }
func (noDriver) Driver() driver.Driver                        { return nil }

// Series recorded while scrapes run (go test -race) count every event.
func TestRecordingWhileScraping(t *testing.T) {
	t.Parallel()
	m := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				m.TasksQueued("scheduler", 1)
				m.ObserveStateOp("set", core.StateTask, time.Duration(i)*time.Microsecond, nil)
				m.TriggerFired(fmt.Sprint("t", g), 1)
			}
		}()
	}
	for range 20 {
		scrape(t, m.Handler())
	}
	wg.Wait()
	text := scrape(t, m.Handler())
	for _, want := range []string{`weir_task_instances_queued_total{by="scheduler"} 2000`, `weir_trigger_events_total{type="t3"} 500`,
		`weir_state_store_operation_duration_seconds_count{kind="task",operation="set"} 2000`} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// The scheduler's unlabelled series are exported from the start, at zero,
// by a process that runs a scheduler (an alert on their absence means the
// scheduler is down, not idle), and by no other: an api-server, a worker
// and a triggerer exported them at zero for ever.
func TestUnlabelledSeriesStartAtZero(t *testing.T) {
	t.Parallel()
	zero := []string{"weir_scheduler_pass_dag_runs_created_count 0", "weir_scheduler_pass_task_instances_queued_sum 0",
		`weir_scheduler_pass_task_instances_queued_bucket{le="+Inf"} 0`}
	if text := scrape(t, New().Handler()); strings.Contains(text, "weir_scheduler_pass_") {
		t.Errorf("a registry of a process without a scheduler exports its series:\n%s", text)
	}
	m := New()
	m.AddScheduler()
	m.AddScheduler() // standalone's roles may each ask
	text := scrape(t, m.Handler())
	for _, want := range zero {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("a scheduler's fresh registry lacks %s", want)
		}
		if strings.Count(text, "\n"+want+"\n") > 1 {
			t.Errorf("a scheduler's registry exports %s twice", want)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]bool{"": false, "gzip": true, "br, gzip;q=0.5": true, "gzip;q=0": false,
		"gzip; q=0.0, identity": false, "deflate": false, "x-gzip": false} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v", header, got)
		}
	}
}

// A series asked for with the wrong number of label values is a bug in
// the caller, caught at once rather than recorded under a wrong key.
func TestWrongLabelCountPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	New().stateOps.add(1, "get", "task")
}
