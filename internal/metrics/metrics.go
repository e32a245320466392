// Package metrics exposes a Weir process's Prometheus metrics: HTTP
// latency, scheduler passes (runs created, tasks queued), task-instance
// states, queue depth, finished tries and their run times, triggers and
// their events and failures, asset events by source, state-store
// operations, worker slots, the database pools, and the Go runtime. One Metrics
// per process; every role of the process records into it and its Handler
// serves /metrics (on the api-server's port, or [metrics] listen).
package metrics

import (
	"database/sql"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weirflow/weir/internal/core"
)

// Metrics holds one process's registry and the series its roles record.
// Its methods are safe for concurrent use; a nil *Metrics records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	http     *prometheus.HistogramVec
	pass     *prometheus.HistogramVec
	finished *prometheus.HistogramVec
	series
}

// New returns a registry with the Go runtime and process collectors and
// Weir's own series.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weir_http_request_duration_seconds", Help: "Latency of HTTP requests served, by route pattern, method and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"handler", "method", "code"}),
		pass: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weir_scheduler_loop_duration_seconds", Help: "Duration of one scheduler wake-up (its passes back to back), by outcome (ok or error).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"outcome"}),
		finished: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weir_task_instance_duration_seconds", Help: "Run time of task tries (start to the worker's final report), by reported state.",
			Buckets: []float64{.1, .5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600},
		}, []string{"state"}),
		series: newSeries(),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.http, m.pass, m.finished)
	m.reg.MustRegister(m.collectors()...)
	return m
}

// Handler serves the metrics in the Prometheus text format. A collector
// that fails (the database is down) leaves its series out and the rest is
// still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// InstrumentHTTP wraps h so every request's latency is recorded under the
// route pattern that served it (bounded: patterns, not paths; "other" for
// none), its method and status code.
func (m *Metrics) InstrumentHTTP(h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		pattern := r.Pattern
		if pattern == "" {
			pattern = "other"
		}
		m.http.WithLabelValues(pattern, r.Method, statusText(sw.code)).Observe(time.Since(start).Seconds())
	})
}

// ObserveSchedulerLoop records one scheduler wake-up.
func (m *Metrics) ObserveSchedulerLoop(d time.Duration, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.pass.WithLabelValues(outcome).Observe(d.Seconds())
}

// ObserveTryFinished records a try's run time as its worker reported its
// final state, and counts it under that state.
func (m *Metrics) ObserveTryFinished(state core.TIState, ran time.Duration) {
	if m == nil {
		return
	}
	m.finished.WithLabelValues(string(state)).Observe(ran.Seconds())
	m.tiFinished.WithLabelValues(string(state)).Inc()
}

// AddDB exports the connection pool statistics of db (go_sql_* series with
// db_name=name).
func (m *Metrics) AddDB(name string, db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	m.reg.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// statusWriter remembers the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flushing a streamed log, for one).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on, for handlers that stream.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func statusText(code int) string {
	const digits = "0123456789"
	if code < 100 || code > 999 {
		return "other"
	}
	return string([]byte{digits[code/100], digits[code/10%10], digits[code%10]})
}
