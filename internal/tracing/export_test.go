package tracing

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector answers exports with the statuses given, one per request (the
// last one repeated), and keeps what each request carried.
type collector struct {
	mu       sync.Mutex
	statuses []int
	reqs     []*http.Request
	spans    []int // spans per request, as the generated code reads them
	answer   []byte
	srv      *httptest.Server
}

func startCollector(t *testing.T, statuses ...int) *collector {
	t.Helper()
	c := &collector{statuses: statuses}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := 0
		for _, rs := range msg.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				n += len(ss.GetSpans())
			}
		}
		c.mu.Lock()
		status := c.statuses[min(len(c.reqs), len(c.statuses)-1)]
		c.reqs = append(c.reqs, r)
		c.spans = append(c.spans, n)
		answer := c.answer
		c.mu.Unlock()
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(status)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reqs)
}

// twoSpans are two ended spans to export.
func twoSpans() []sdktrace.ReadOnlySpan {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t")
	for _, name := range []string{"a", "b"} {
		_, s := tr.Start(context.Background(), name)
		s.End()
	}
	return rec.Ended()
}

// Refusals the OTLP specification calls transient are retried (Retry-After
// honoured); others, and a partial success that rejected spans, are not.
func TestExportRetriesOnlyTransientRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		statuses []int
		answer   []byte
		ok       bool
		requests int
	}{
		{"accepted", []int{200}, nil, true, 1},
		{"unavailable twice", []int{503, 502, 200}, nil, true, 3},
		{"too many requests", []int{429, 200}, nil, true, 2},
		{"bad request", []int{400}, nil, false, 1},
		{"unauthorized", []int{401}, nil, false, 1},
		// partial_success {rejected_spans: 1, error_message: "no"}
		{"partial success", []int{200}, []byte{0x0a, 0x06, 0x08, 0x01, 0x12, 0x02, 'n', 'o'}, false, 1},
		// partial_success {error_message: "warn"}: a warning, not a loss
		{"partial success warning", []int{200}, []byte{0x0a, 0x06, 0x12, 0x04, 'w', 'a', 'r', 'n'}, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			col := startCollector(t, c.statuses...)
			col.answer = c.answer
			e, err := newExporter(col.srv.URL+"/v1/traces", nil)
			if err != nil {
				t.Fatal(err)
			}
			err = e.ExportSpans(context.Background(), twoSpans())
			if (err == nil) != c.ok || col.requests() != c.requests {
				t.Errorf("export = %v after %d requests; want ok=%v after %d", err, col.requests(), c.ok, c.requests)
			}
			if col.spans[0] != 2 || col.reqs[0].Header.Get("Content-Type") != "application/x-protobuf" {
				t.Errorf("first request carried %d spans as %q", col.spans[0], col.reqs[0].Header.Get("Content-Type"))
			}
		})
	}
}

// A collector that stays down costs the export its timeout, not more.
func TestExportGivesUpAtItsTimeout(t *testing.T) {
	t.Parallel()
	col := startCollector(t, 503)
	e, err := newExporter(col.srv.URL, []string{"OTEL_EXPORTER_OTLP_TIMEOUT=700"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = e.ExportSpans(context.Background(), twoSpans())
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("export to a collector that is down = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("export took %v with a 700 ms timeout", took)
	}
	if col.requests() < 2 {
		t.Errorf("%d requests: the refusal was not retried", col.requests())
	}
}

// The standard variables set headers (the traces form winning), gzip and
// the timeout; a value that cannot be read is an error naming its variable.
func TestExporterVariables(t *testing.T) {
	t.Parallel()
	col := startCollector(t, 200)
	e, err := newExporter(col.srv.URL, []string{
		"OTEL_EXPORTER_OTLP_HEADERS=x-tenant=ignored,authorization=Basic%20abc",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-tenant=t1, x-empty=",
		"OTEL_EXPORTER_OTLP_COMPRESSION=gzip",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), twoSpans()); err != nil {
		t.Fatal(err)
	}
	h := col.reqs[0].Header
	if h.Get("X-Tenant") != "t1" || h.Get("Authorization") != "" || h.Get("Content-Encoding") != "gzip" || col.spans[0] != 2 {
		t.Errorf("headers %v, %d spans; want x-tenant t1 (the traces variable wins), gzip", h, col.spans[0])
	}

	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"OTEL_EXPORTER_OTLP_HEADERS=novalue",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS==v",
		"OTEL_EXPORTER_OTLP_TIMEOUT=10s",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=0",
		"OTEL_EXPORTER_OTLP_COMPRESSION=zstd",
		"OTEL_EXPORTER_OTLP_CERTIFICATE=" + filepath.Join(dir, "missing.pem"),
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE=" + notPEM,
		"OTEL_EXPORTER_OTLP_CLIENT_KEY=" + notPEM,
	} {
		name, _, _ := strings.Cut(bad, "=")
		if _, err := newExporter(col.srv.URL, []string{bad}); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(name, "OTEL_EXPORTER_OTLP_")) {
			t.Errorf("%s: error %v does not name the variable", bad, err)
		}
	}
	if _, err := New(Config{Endpoint: col.srv.URL, Environ: []string{"OTEL_EXPORTER_OTLP_TIMEOUT=soon"}}); err == nil {
		t.Error("New accepted an unreadable timeout")
	}
}

// A certificate variable makes the exporter trust that CA over TLS.
func TestExporterTrustsTheConfiguredCA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(srv.Close)
	e, err := newExporter(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), twoSpans()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("export to a server of an unknown CA = %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err = newExporter(srv.URL, []string{"OTEL_EXPORTER_OTLP_CERTIFICATE=" + ca})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), twoSpans()); err != nil {
		t.Errorf("export trusting the server's CA = %v", err)
	}
}

// A collector that is restarting (its port refuses connections) gets the
// spans once it is back, within the export's time.
func TestExportWaitsForACollectorComingBack(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e, err := newExporter("http://"+addr+"/v1/traces", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var msg coltrace.ExportTraceServiceRequest
			if proto.Unmarshal(b, &msg) == nil {
				got <- len(msg.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans())
			}
		})}
		t.Cleanup(func() { srv.Close() })
		_ = srv.Serve(ln)
	}()
	if err := e.ExportSpans(context.Background(), twoSpans()); err != nil {
		t.Fatalf("export to a collector back after 300 ms = %v", err)
	}
	if n := <-got; n != 2 {
		t.Errorf("the collector got %d spans, want 2", n)
	}
}

// A refusal's protobuf google.rpc.Status is read for its message; a
// Retry-After beyond the export's time ends the export at once.
func TestExportRefusals(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte{0x08, 0x03, 0x12, 0x08, 'b', 'a', 'd', ' ', 's', 'p', 'a', 'n'}) // Status{code: 3, message: "bad span"}
	}))
	t.Cleanup(srv.Close)
	e, err := newExporter(srv.URL+"/bad", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), twoSpans()); err == nil || !strings.HasSuffix(err.Error(), "400 Bad Request: bad span") {
		t.Errorf("export refused = %v", err)
	}
	e, err = newExporter(srv.URL+"/busy", []string{"OTEL_EXPORTER_OTLP_TIMEOUT=2000"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.ExportSpans(context.Background(), twoSpans()); err == nil || !strings.Contains(err.Error(), "no time left") {
		t.Errorf("export told to come back in 30 s = %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("export waited %v for a retry it had no time for", took)
	}
}
