package execapi_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
)

// BenchmarkEmit measures one emission end to end — the worker's Execution
// API client, loopback HTTP, the token and try checks, the JSON, the
// service's rules, the write transaction and the receipt — on SQLite and
// PostgreSQL, with 1 and 16 running tries emitting at once (each its own
// token and connection pool, a partition key, a small extra and the fresh
// idempotency key the client makes up). Every try's task declares the asset
// and a consumer DAG is scheduled on it, so each event is also queued. It
// reports emissions/s and the p50/p99 of one call (docs/benchmarks.md):
//
//	go test -run '^$' -bench BenchmarkEmit -benchmem ./internal/execapi
func BenchmarkEmit(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, emitters := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/emitters=%d", engine, emitters), func(b *testing.B) {
				benchEmit(b, execapitest.NewOn(b, openEngine(b, engine), execapi.Config{}), emitters)
			})
		}
	}
}

func benchEmit(b *testing.B, env *execapitest.Env, emitters int) {
	batches := core.Asset{Name: "batches", URI: "s3://lake/batches"}
	dag := core.DAG{DagID: "producer", Assets: []core.Asset{batches}}
	for i := range emitters {
		dag.Tasks = append(dag.Tasks, core.Task{TaskID: fmt.Sprintf("t%02d", i), Operator: "noop",
			Outlets: []core.AssetRef{{Name: batches.Name}}})
	}
	cons := core.DAG{DagID: "consumer", Assets: []core.Asset{batches}, AssetSchedule: []core.AssetRef{{Name: batches.Name}},
		Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}}
	var clients []*execclient.Client
	for _, wl := range runAssetDags(b, env, dag, cons) {
		clients = append(clients, taskClient(env, wl))
	}
	extra := json.RawMessage(`{"rows": 10000, "path": "s3://lake/batches/part-0001.parquet"}`)
	var (
		next atomic.Int64
		mu   sync.Mutex
		lat  []time.Duration
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	cpu0 := cpuTime(b)
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				part := fmt.Sprintf("batch-%d", n)
				t0 := time.Now()
				if _, err := c.Emit(b.Context(), execclient.EmitRequest{Asset: core.AssetRef{Name: batches.Name},
					PartitionKey: &part, Extra: extra}); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/wall.Seconds(), "emissions/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/op")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
	}
}

// cpuTime is the CPU time (user and system) this process has used: the
// client's and the server's, which share it. Per emission it does not
// depend on how loaded the machine is, as wall-clock rates do.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
