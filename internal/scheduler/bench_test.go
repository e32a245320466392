package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// BenchmarkWideRun measures the scheduler's share of one run of 1,000
// independent tasks, with the worker simulated through the store in rounds
// of up to 64 claims. Report: task instances per second.
func BenchmarkWideRun(b *testing.B) {
	spec := wide("wide", 1000, core.Task{Operator: "noop"})
	spec.MaxActiveTasks = 1000
	for range b.N {
		b.StopTimer()
		h := newHarness(b, spec)
		b.StartTimer()
		run := h.trigger("wide")
		for !h.run(run).State.Terminal() {
			h.step()
			for _, ti := range h.claim("w", 64) {
				h.finish(ti, succeed)
			}
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "ti/s")
}

// BenchmarkWideRunAtDagLimit is BenchmarkWideRun with the DAG's default
// max_active_tasks (16) binding instead of the pool: each queueing pass
// finds the DAG at its limit after the first few of ~1,000 waiting
// instances (it read every one of them, on every pass, before a DAG at its
// limit was left out of the pages read next).
func BenchmarkWideRunAtDagLimit(b *testing.B) {
	spec := wide("wide", 1000, core.Task{Operator: "noop"})
	for range b.N {
		b.StopTimer()
		h := newHarness(b, spec)
		b.StartTimer()
		run := h.trigger("wide")
		for !h.run(run).State.Terminal() {
			h.step()
			for _, ti := range h.claim("w", 64) {
				h.finish(ti, succeed)
			}
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "ti/s")
}

// BenchmarkChainHandoff measures the scheduler pass that hands a finished
// task's successor to the workers, in a chain of 200 tasks (one op = one
// hand-off: a pass plus the simulated worker's claim, start and finish).
func BenchmarkChainHandoff(b *testing.B) {
	const n = 200
	spec := core.DAG{DagID: "chain"}
	for i := range n {
		t := core.Task{TaskID: taskName(i), Operator: "noop"}
		if i > 0 {
			t.DependsOn = []string{taskName(i - 1)}
		}
		spec.Tasks = append(spec.Tasks, t)
	}
	h := newHarness(b, spec)
	b.ResetTimer()
	handoffs := 0
	for handoffs < b.N {
		run := h.trigger("chain")
		for !h.run(run).State.Terminal() && handoffs < b.N {
			h.step()
			for _, ti := range h.claim("w", 1) {
				h.finish(ti, succeed)
				handoffs++
			}
		}
	}
}

func taskName(i int) string { return fmt.Sprintf("t%03d", i) }
