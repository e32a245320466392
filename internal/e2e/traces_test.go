package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/testutil/otlptest"
	"github.com/weirflow/weir/internal/tracing"
)

// TestTraces runs a task that fails its first try and succeeds its second
// on a standalone (the built binary) exporting to an in-process OTLP/HTTP
// receiver, on each engine: the receiver gets the task's life in the run's
// trace, under the run's span (sent by the scheduler as the run ends):
// each try a span (with its state, and the retry event on the first)
// whose children are its queued and running phases, every span naming
// the dag, run, task, map index and try. SQLite finds the collector
// through the standard OTEL_EXPORTER_OTLP_ENDPOINT, PostgreSQL through
// [traces] otlp_endpoint.
func TestTraces(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		rcv := otlptest.Start(t)
		if len(env) == 0 {
			env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.BaseURL())
		} else {
			env = append(env, "WEIR__TRACES__OTLP_ENDPOINT="+rcv.URL())
		}
		home, dags := t.TempDir(), t.TempDir()
		marker := filepath.Join(t.TempDir(), "tried")
		writeFile(t, filepath.Join(dags, "traced.yaml"), fmt.Sprintf(`dag_id: traced
schedule: null
tasks:
  - task_id: flaky
    operator: bash
    retries: 1
    retry_delay: 1s
    bash_command: test -f %s || { touch %s; exit 1; }
`, marker, marker))
		sa := startStandalone(t, home, dags, env...)
		sa.api.WaitDAG("traced")
		sa.api.Trigger("traced", "r1", nil)
		sa.api.WaitRunSuccess("traced", "r1")

		task := map[string]string{"dag_id": "traced", "run_id": "r1", "task_id": "flaky", "map_index": "-1"}
		waitFor(t, "the receiver to get both tries' spans and phases", func() (bool, string) {
			spans := rcv.Where(task)
			return len(spans) >= 6, fmt.Sprintf("%d spans, decode errors %v:\n%s", len(spans), rcv.Errors(), otlptest.Describe(spans))
		})
		runSpan := tracing.RunSpanID("traced", "r1").String()
		waitFor(t, "the receiver to get the run's span", func() (bool, string) {
			for _, s := range rcv.Spans() {
				if s.SpanID == runSpan {
					return s.Attrs["state"] == "success" && s.ParentID == "", otlptest.Describe([]otlptest.Span{s})
				}
			}
			return false, "not yet:\n" + otlptest.Describe(rcv.Spans())
		})
		spans := rcv.Where(task)
		wantTrace := tracing.RunTraceID("traced", "r1").String()
		tries := map[string]otlptest.Span{}
		for _, s := range spans {
			if s.TraceID != wantTrace {
				t.Errorf("span %s is in trace %s, not the run's %s", s.Name, s.TraceID, wantTrace)
			}
			if s.Name == "flaky" {
				tries[s.Attrs["try_number"]] = s
				if s.ParentID != runSpan {
					t.Errorf("try %s's span has parent %s, not the run's span %s", s.Attrs["try_number"], s.ParentID, runSpan)
				}
			}
		}
		first, second := tries["1"], tries["2"]
		if first.Attrs["state"] != "up_for_retry" || !first.StatusError || !hasEvent(first, "retry") || !hasEvent(first, "created") ||
			second.Attrs["state"] != "success" || second.StatusError || !hasEvent(second, "finished") || second.Resource["service.name"] != "weir" {
			t.Fatalf("tries' spans are not try 1 up_for_retry (retry event) then try 2 success:\n%s", otlptest.Describe(spans))
		}
		for num, try := range tries {
			var phases []string
			for _, s := range spans {
				if s.ParentID == try.SpanID {
					phases = append(phases, s.Name)
					if s.Attrs["try_number"] != num || s.Start.Before(try.Start) || s.End.After(try.End) {
						t.Errorf("phase %s of try %s: %v %s..%s, outside its try %s..%s", s.Name, num, s.Attrs, s.Start, s.End, try.Start, try.End)
					}
				}
			}
			if got := strings.Join(phases, " "); got != "queued running" {
				t.Errorf("try %s's phases = %q, want queued running:\n%s", num, got, otlptest.Describe(spans))
			}
		}
		if errs := rcv.Errors(); len(errs) > 0 {
			t.Errorf("the receiver could not decode: %v", errs)
		}
	})
}

func hasEvent(s otlptest.Span, name string) bool {
	for _, e := range s.Events {
		if e.Name == name {
			return true
		}
	}
	return false
}
