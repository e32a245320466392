package triggerer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/wait"
)

// BenchmarkStreamCommit measures events committed per second from one
// stream: a triggerer runs a streaming trigger that emits N events, B per
// EmitBatch (each batch one transaction behind the trigger's fence), with
// room for all of them (max_pending N); the time runs from the stream's
// open to its close (docs/benchmarks.md, "Streams").
//
//	go test -run '^$' -bench StreamCommit -benchtime 1x ./internal/triggerer/
func BenchmarkStreamCommit(b *testing.B) {
	cases := []struct{ n, batch int }{{100_000, 1000}, {100_000, 100}, {5_000, 1}}
	for name, open := range engines() {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/batch=%d", name, c.batch), func(b *testing.B) {
				for range b.N {
					st, svc, reg, _ := streamEnv(b, open)
					begin := time.Now()
					openPages(b, svc, "bench", c.n, c.batch, c.n)
					start(b, st, svc, reg, 0)
					wait.Until(b, 10*time.Minute, "the stream to close", closed(b, st, "bench"))
					b.ReportMetric(float64(c.n)/time.Since(begin).Seconds(), "events/s")
				}
			})
		}
	}
}
