package tracing_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tracing"
)

// BenchmarkTryFinished is the api-server's cost of tracing one finished
// try (its span, two phases, five events), batched and sent to a loopback
// receiver in the same process (whose decoding the figure includes);
// "off" is the same call on the nil tracer of a deployment without an
// endpoint.
func BenchmarkTryFinished(b *testing.B) {
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	queued, started, end := t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	tries := make([]core.TaskInstance, 1024) // built before the clock runs
	for i := range tries {
		tries[i] = core.TaskInstance{ID: fmt.Sprint("ti-", i), DagID: "etl", RunID: "r1", TaskID: "load", MapIndex: -1, TryNumber: 1,
			Queue: "default", Pool: "default_pool", Operator: "bash", Hostname: "w1", QueuedAt: &queued, StartDate: &started}
	}
	try := func(i int) *core.TaskInstance { return &tries[i%len(tries)] }
	b.Run("on", func(b *testing.B) {
		tr, _ := exporting(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			tr.TryFinished(try(i), t0, core.TISuccess, end, nil)
		}
		b.StopTimer()
		flush(b, tr)
	})
	b.Run("off", func(b *testing.B) {
		var tr *tracing.Tracer
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			tr.TryFinished(try(i), t0, core.TISuccess, end, nil)
		}
	})
}
