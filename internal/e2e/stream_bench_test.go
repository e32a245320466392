package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// pipelineDAGs are the 100-page pipeline, each page taking 50 ms
// to fetch and 50 ms to insert: streaming (insert mapped lazily over the
// pages of a command trigger as they come) and classic (fetch every page,
// then expand insert over the list).
const pipelineDAGs = `dag_id: streaming
tasks:
  - task_id: fetch
    operator: sensor
    trigger:
      type: command
      command: |
        for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) 99); do sleep 0.05; echo "{\"page\": $i}"; done
  - task_id: insert
    operator: bash
    iterate: fetch
    pool: table_writers
    bash_command: sleep 0.05
  - task_id: report
    operator: bash
    depends_on: [insert]
    bash_command: echo done
---
dag_id: classic
tasks:
  - task_id: fetch
    operator: bash
    bash_command: |
      pages=""
      for i in $(seq 0 99); do sleep 0.05; pages="$pages${pages:+,}{\"page\": $i}"; done
      weir xcom push return_value "[$pages]"
  - task_id: insert
    operator: bash
    expand:
      item: {xcom: fetch}
    pool: table_writers
    bash_command: sleep 0.05
  - task_id: report
    operator: bash
    depends_on: [insert]
    bash_command: echo done
`

// BenchmarkStreamingPipeline runs the 100-page pipeline streaming and
// classic, alternately, in one standalone on SQLite (docs/benchmarks.md,
// "Streaming vs classic"), and reports each one's wall time (run start to
// end), their ratio, and — for the streaming runs — the time from the
// first event's commit to the first insert's start (p50 over the runs).
// The inserts share the pool table_writers: one slot (a table loaded by
// one writer at a time) and 16 (the worker's slots, inserts in parallel).
//
//	go test -run '^$' -bench StreamingPipeline -benchtime 5x ./internal/e2e/
func BenchmarkStreamingPipeline(b *testing.B) {
	dags, home := b.TempDir(), b.TempDir()
	weirtest.WriteFile(b, filepath.Join(dags, "pipeline.yaml"), pipelineDAGs)
	s := weirtest.StartStandalone(b, weirBin, home, dags)
	api := s.API
	api.WaitDAG("streaming")
	api.WaitDAG("classic")
	if code, body := api.Do("POST", "/api/v2/pools", map[string]any{"name": "table_writers", "slots": 1}); code != 201 {
		b.Fatalf("create pool: %d %s", code, body)
	}
	runs := 0 // run ids stay unique across the calibration run and the measured ones
	for _, writers := range []int{1, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			if code, body := api.Do("PATCH", "/api/v2/pools/table_writers", map[string]any{"slots": writers}); code != 200 {
				b.Fatalf("set pool slots: %d %s", code, body)
			}
			runPipeline(b, api, &runs)
		})
	}
}

// runPipeline triggers classic then streaming b.N times and reports the
// p50 wall times, their ratio and the first insert's start.
func runPipeline(b *testing.B, api *weirtest.Client, runs *int) {
	var walls = map[string][]time.Duration{}
	var firsts []time.Duration
	b.ResetTimer()
	for range b.N {
		for _, dag := range []string{"classic", "streaming"} {
			runID := fmt.Sprintf("b%03d", *runs)
			run := api.Trigger(dag, runID, nil)
			done := api.WaitRunDone(dag, runID)
			if done.State != core.RunSuccess || done.StartDate == nil || done.EndDate == nil {
				b.Fatalf("%s %s = %s", dag, runID, done.State)
			}
			walls[dag] = append(walls[dag], done.EndDate.Sub(*done.StartDate))
			*runs++
			if dag == "streaming" {
				firsts = append(firsts, firstStartAfterFirstEvent(b, api, run, runID))
			}
		}
	}
	b.StopTimer()
	s50, c50 := p50(walls["streaming"]), p50(walls["classic"])
	b.ReportMetric(s50.Seconds(), "streaming-s")
	b.ReportMetric(c50.Seconds(), "classic-s")
	b.ReportMetric(s50.Seconds()/c50.Seconds(), "ratio")
	b.ReportMetric(float64(p50(firsts).Milliseconds()), "first-start-ms")
	b.Logf("streaming %v, classic %v, first insert after the first event %v", walls["streaming"], walls["classic"], firsts)
}

// firstStartAfterFirstEvent is the time from the commit of a streaming
// run's first envelope to the start of its first insert.
func firstStartAfterFirstEvent(b *testing.B, api *weirtest.Client, run core.DagRun, runID string) time.Duration {
	var page struct {
		Events []core.StreamEvent `json:"events"`
	}
	api.Get("/api/v2/streams/"+url.PathEscape(core.TaskStreamID(run.ID, "fetch"))+"/events?limit=1", &page)
	if len(page.Events) != 1 {
		b.Fatalf("run %s: no first event", runID)
	}
	var first time.Time
	for _, ti := range api.TaskInstances("streaming", runID) {
		if ti.TaskID == "insert" && ti.MapIndex >= 0 && ti.StartDate != nil && (first.IsZero() || ti.StartDate.Before(first)) {
			first = *ti.StartDate
		}
	}
	return first.Sub(page.Events[0].CreatedAt)
}

// p50 is the median of ds.
func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
