package metrics

import (
	"errors"
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
