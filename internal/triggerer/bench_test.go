package triggerer_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger/builtin"
	"github.com/weirflow/weir/internal/triggerer"
)

// BenchmarkWaitingTriggers measures one triggerer running N (default
// 10,000; -triggers N) timedelta triggers that wait an hour, on SQLite, in
// a process that runs nothing else: the process's resident memory and Go
// heap and stacks once every trigger runs, and the memory each trigger
// adds (docs/benchmarks.md, "Deferral and the triggerer").
//
//	go test -run '^$' -bench WaitingTriggers -benchtime 1x ./internal/triggerer/
func BenchmarkWaitingTriggers(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("WEIR_BENCH_TRIGGERS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		st := sqlitetest.Open(b)
		svc := service.New(service.Config{Store: st})
		ids := deferred(b, st, svc, n, core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1h"}`)}, 0)
		runtime.GC()
		before := memNow()
		ctx, cancel := context.WithCancel(context.Background())
		tr := &triggerer.Triggerer{Service: svc, Store: st, Registry: builtin.Registry(),
			Config: triggerer.Config{Capacity: n, HeartbeatInterval: 5 * time.Second}}
		done := make(chan struct{})
		go func() { defer close(done); _ = tr.Start(ctx) }()
		start := time.Now()
		wait.Until(b, 5*time.Minute, "every trigger to run", func() bool { return tr.Running() == len(ids) })
		b.ReportMetric(time.Since(start).Seconds(), "s_to_run_all")
		runtime.GC()
		after := memNow()
		b.ReportMetric(after.rss/(1<<20), "rss_MiB")
		b.ReportMetric(after.heap/(1<<20), "heap_MiB")
		b.ReportMetric(after.stack/(1<<20), "stack_MiB")
		b.ReportMetric((after.rss-before.rss)/float64(n)/1024, "KiB_rss/trigger")
		b.ReportMetric((after.heap+after.stack-before.heap-before.stack)/float64(n)/1024, "KiB_go/trigger")
		cancel()
		<-done
	}
}

type mem struct{ rss, heap, stack float64 }

// memNow reads the process's resident set (VmRSS) and the Go heap and
// stacks in use.
func memNow() mem {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := mem{heap: float64(ms.HeapInuse), stack: float64(ms.StackInuse)}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.rss = kb * 1024
			}
		}
	}
	return m
}
