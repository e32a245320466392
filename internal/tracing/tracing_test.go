package tracing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/otlptest"
	"github.com/weirflow/weir/internal/tracing"
)

func TestEndpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		configured string
		env        []string
		want       string
	}{
		{"", nil, ""},
		{"", []string{"HOME=/x"}, ""},
		{"http://c:4318/v1/traces", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://other:4318"}, "http://c:4318/v1/traces"},
		{"", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318/"}, "http://c:4318/v1/traces"},
		{"", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=https://t/x"}, "https://t/x"},
	} {
		if got := tracing.Endpoint(c.configured, c.env); got != c.want {
			t.Errorf("Endpoint(%q, %v) = %q, want %q", c.configured, c.env, got, c.want)
		}
	}
	for _, bad := range []string{"collector:4318", "ftp://c/v1/traces", "http://"} {
		if err := tracing.CheckEndpoint(bad); err == nil {
			t.Errorf("CheckEndpoint(%q) accepted it", bad)
		}
		if _, err := tracing.New(tracing.Config{Endpoint: bad}); err == nil {
			t.Errorf("New with endpoint %q succeeded", bad)
		}
	}
}

// No endpoint, no tracer: a nil Tracer takes every call and sends nothing.
func TestNoEndpointNoTracer(t *testing.T) {
	t.Parallel()
	tr, err := tracing.New(tracing.Config{})
	if tr != nil || err != nil {
		t.Fatalf("New without endpoint = %v, %v; want nil, nil", tr, err)
	}
	ti := &core.TaskInstance{ID: "x", DagID: "d", RunID: "r", TaskID: "t"}
	tr.TryFinished(ti, time.Time{}, core.TISuccess, time.Now(), nil)
	tr.TryDeferred(ti, "timedelta", time.Now())
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A deferred then retried try: its phases join the try's span, every span
// carries the run's trace id and the try's attributes, and the try's span
// says how it ended.
func TestTrySpans(t *testing.T) {
	t.Parallel()
	rcv := otlptest.Start(t)
	tr, err := tracing.New(tracing.Config{Endpoint: rcv.URL(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { x := t0.Add(time.Duration(s) * time.Second); return &x }
	ti := &core.TaskInstance{ID: "ti-1", DagID: "etl", RunID: "manual__1", TaskID: "load", MapIndex: 2, TryNumber: 1,
		Queue: "default", Pool: "default_pool", Operator: "bash", Hostname: "w1", QueuedAt: at(2), StartDate: at(3)}
	tr.TryDeferred(ti, "timedelta", *at(5))   // ran 3..5, deferred
	ti.QueuedAt, ti.StartDate = at(9), at(10) // resumed: queued again at 9, ran from 10
	next := t0.Add(time.Minute)
	tr.TryFinished(ti, t0, core.TIUpForRetry, *at(12), &next)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 4 {
		t.Fatalf("received %d spans, want 4 (try, running before the deferral, queued, running):\n%s", len(spans), otlptest.Describe(spans))
	}
	try := rcv.Where(map[string]string{"state": "up_for_retry"})
	if len(try) != 1 {
		t.Fatalf("no single span of the try:\n%s", otlptest.Describe(spans))
	}
	root := try[0]
	wantTrace := tracing.RunTraceID("etl", "manual__1").String()
	if root.TraceID != wantTrace || root.ParentID != tracing.RunSpanID("etl", "manual__1").String() || root.Name != "load" || !root.Start.Equal(t0) || !root.End.Equal(*at(12)) ||
		!root.StatusError || root.Resource["service.name"] != "weir" {
		t.Errorf("try span = %+v; want trace %s, the run span as parent, named load, 0..12 s, an error, from weir", root, wantTrace)
	}
	var events []string
	for _, e := range root.Events {
		events = append(events, e.Name)
	}
	if got := strings.Join(events, " "); got != "created queued running finished retry" {
		t.Errorf("try events = %s", got)
	}
	for _, s := range spans {
		for k, v := range map[string]string{"dag_id": "etl", "run_id": "manual__1", "task_id": "load", "map_index": "2", "try_number": "1"} {
			if s.Attrs[k] != v {
				t.Errorf("span %s has %s=%q, want %q", s.Name, k, s.Attrs[k], v)
			}
		}
		if s.SpanID != root.SpanID && (s.ParentID != root.SpanID || s.TraceID != wantTrace) {
			t.Errorf("phase %s (%s..%s) is not a child of the try's span:\n%s", s.Name, s.Start, s.End, otlptest.Describe(spans))
		}
	}
	phases := map[string]bool{}
	for _, s := range spans {
		if s.SpanID != root.SpanID {
			phases[s.Name+" "+s.Start.Sub(t0).String()+".."+s.End.Sub(t0).String()] = true
		}
	}
	for _, want := range []string{"running 3s..5s", "queued 9s..10s", "running 10s..12s"} {
		if !phases[want] {
			t.Errorf("no phase %s; phases %v", want, phases)
		}
	}
}

// A run's span is the root of its trace, with the id its tries' spans name
// as their parent.
func TestRunSpan(t *testing.T) {
	t.Parallel()
	tr, rcv := exporting(t)
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	started := t0.Add(time.Second)
	tr.RunFinished(&core.DagRun{DagID: "etl", RunID: "r1", RunType: core.RunManual, QueuedAt: t0, StartDate: &started},
		core.RunFailed, t0.Add(time.Minute))
	flush(t, tr)
	spans := rcv.Spans()
	if len(spans) != 1 {
		t.Fatalf("received %d spans, want the run's:\n%s", len(spans), otlptest.Describe(spans))
	}
	s := spans[0]
	if s.TraceID != tracing.RunTraceID("etl", "r1").String() || s.SpanID != tracing.RunSpanID("etl", "r1").String() ||
		s.ParentID != "" || s.Name != "etl" || s.Attrs["run_id"] != "r1" || s.Attrs["state"] != "failed" ||
		s.Attrs["run_type"] != "manual" || !s.StatusError || !s.Start.Equal(t0) || !s.End.Equal(t0.Add(time.Minute)) || len(s.Events) != 3 {
		t.Errorf("run span:\n%s", otlptest.Describe(spans))
	}
}

// A try failed over by the scheduler is sent as a finished try, its span
// saying so with a failed_over event naming the worker.
func TestTryFailedOver(t *testing.T) {
	t.Parallel()
	tr, rcv := exporting(t)
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	started := t0.Add(time.Second)
	tr.TryFailedOver(&core.TaskInstance{ID: "ti-9", DagID: "etl", RunID: "r1", TaskID: "load", MapIndex: -1, TryNumber: 1,
		WorkerID: "w1", QueuedAt: &t0, StartDate: &started}, core.TIFailed, nil, t0.Add(time.Minute))
	flush(t, tr)
	try := rcv.Where(map[string]string{"task_id": "load", "state": "failed"})
	if len(try) != 1 {
		t.Fatalf("no span of the failed-over try:\n%s", otlptest.Describe(rcv.Spans()))
	}
	var events []string
	for _, e := range try[0].Events {
		events = append(events, e.Name+"="+e.Attrs["worker_id"])
	}
	if got := strings.Join(events, " "); got != "queued= running= failed_over=w1 finished=" || !try[0].StatusError {
		t.Errorf("failed-over try's events = %s (error status %v)", got, try[0].StatusError)
	}
}

// exporting returns a tracer exporting to a fresh in-process receiver.
func exporting(t testing.TB) (*tracing.Tracer, *otlptest.Receiver) {
	t.Helper()
	rcv := otlptest.Start(t)
	tr, err := tracing.New(tracing.Config{Endpoint: rcv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return tr, rcv
}

// flush sends the spans tr holds.
func flush(t testing.TB, tr *tracing.Tracer) {
	t.Helper()
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}
