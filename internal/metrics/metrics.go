// Package metrics exposes a Weir process's Prometheus metrics: HTTP
// latency, scheduler passes (runs created, tasks queued), task-instance
// states, queue depth, finished tries and their run times, triggers and
// their events and failures, asset events by source, state-store
// operations, worker slots, the database pools, and the Go runtime. One Metrics
// per process; every role of the process records into it and its Handler
// serves /metrics (on the api-server's port, or [metrics] listen).
package metrics

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"net/http"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Metrics holds one process's registry and the series its roles record.
// Its methods are safe for concurrent use; a nil *Metrics records nothing.
type Metrics struct {
	reg      registry
	http     histogramVec
	pass     histogramVec
	finished histogramVec
	series
}

// New returns a registry with the Go runtime and process series and
// Weir's own.
func New() *Metrics {
	m := &Metrics{
		http: newHistogramVec("weir_http_request_duration_seconds", "Latency of HTTP requests served, by route pattern, method and status code.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "handler", "method", "code"),
		pass: newHistogramVec("weir_scheduler_loop_duration_seconds", "Duration of one scheduler wake-up (its passes back to back), by outcome (ok or error).",
			[]float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "outcome"),
		finished: newHistogramVec("weir_task_instance_duration_seconds", "Run time of task tries (start to the worker's final report), by reported state.",
			[]float64{.1, .5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600}, "state"),
		series: newSeries(),
	}
	m.reg.add(collectorFunc(goFamilies), collectorFunc(processFamilies), m.http, m.pass, m.finished)
	m.reg.add(m.collectors()...)
	return m
}

// Handler serves the metrics in the Prometheus text format (gzipped when
// the scraper accepts it). A series that cannot be read (the database is
// down) is left out and the rest is still served.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		m.reg.write(&buf)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Header().Set("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			_, _ = w.Write(buf.Bytes())
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write(buf.Bytes())
		_ = zw.Close()
	})
}

// acceptsGzip says whether an Accept-Encoding header takes gzip (named
// without q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
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
		m.http.observe(time.Since(start).Seconds(), pattern, r.Method, statusText(sw.code))
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
	m.pass.observe(d.Seconds(), outcome)
}

// ObserveTryFinished records a try's run time as its worker reported its
// final state, and counts it under that state.
func (m *Metrics) ObserveTryFinished(state core.TIState, ran time.Duration) {
	if m == nil {
		return
	}
	m.finished.observe(ran.Seconds(), string(state))
	m.tiFinished.add(1, string(state))
}

// AddDB exports the connection pool statistics of db (go_sql_* series with
// db_name=name).
func (m *Metrics) AddDB(name string, db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	m.reg.add(collectorFunc(func() []family { return dbFamilies(name, db.Stats()) }))
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
