// Command statebench measures task state (AIP-103) through the product
// stack: a `weir api-server` child process (REST API + Execution API, built
// exactly as the api-server role builds them) on loopback HTTP, on SQLite or
// PostgreSQL, reached with the worker's own Execution API client (keep-alive
// connection pool) and real per-try execution tokens (JWT, HS512) validated
// on every request.
//
// Setup per repetition: a fresh home and database (`weir db migrate`), a run
// of -tis queued task instances, a worker credential from `weir tokens
// create --worker`, and every instance claimed (POST /execution/workloads/claim)
// and started (PATCH /execution/task-instances/{id}/run) so that each has a
// running try and its own token.
//
// Scenarios:
//
//	ops      W concurrent writers (each its own task instances, closed loop)
//	         doing PUT /execution/store/ti/{ti}/{key} (set) then GET (get)
//	         for -duration each: ops/s, p50, p99, max latency. -ops emit
//	         adds POST /execution/task-instances/{id}/asset-events (an
//	         asset event with a partition key, docs/emission.md).
//	cleanup  -rows expired task-state rows (plus 10 % that must survive:
//	         future expiry and never-expire) bulk-inserted with SQL over
//	         1,000 runs × 100 tasks × 10 keys, then the statestore Cleanup
//	         (what `weir state-store cleanup-task-store` runs, from this
//	         separate process as the CLI would) with each -batches size, while
//	         one writer sets task state through the Execution API: total
//	         time, rows/s, the longest batch, and the writer's worst latency
//	         while cleanup ran.
//
// Usage (see bench/run.sh, STATE=1):
//
//	statebench -engine sqlite -scenario ops -writers 1,16 -reps 3
//	statebench -engine postgres -dsn postgres://... -scenario cleanup -batches 0,1000,10000
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for per-repetition databases

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// taskScope is a try's own task state (the token names the instance).
var taskScope = core.StateScope{Kind: core.StateTask}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(serve(os.Args[2:]))
	}
	if err := drive(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "statebench:", err)
		os.Exit(1)
	}
}

// serve runs `weir api-server`.
func serve(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if path := os.Getenv("WEIR_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path) //nolint:gosec // the operator's own environment variable
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	return cli.Run(ctx, append([]string{"api-server"}, args...), cli.Options{})
}

type options struct {
	engine, dsn, scenario, cpuprofile string
	writers, batches                  []int
	ops                               []string
	tis, reps, rows, keys             int
	duration                          time.Duration
	inprocess                         bool
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func drive(args []string) error {
	var o options
	var writers, batches, ops string
	fs := flag.NewFlagSet("statebench", flag.ContinueOnError)
	fs.StringVar(&o.engine, "engine", "sqlite", "sqlite or postgres")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("WEIR_BENCH_POSTGRES_DSN"), "PostgreSQL maintenance DSN (a fresh database per repetition)")
	fs.StringVar(&o.scenario, "scenario", "ops,cleanup", "ops and/or cleanup")
	fs.StringVar(&writers, "writers", "1,16", "concurrent writers (ops)")
	fs.StringVar(&batches, "batches", "0,1000,10000", "state_cleanup_batch_size values (cleanup)")
	fs.StringVar(&ops, "ops", "set,get", "operations (ops): set, get (task state), emit (an asset event with a partition key)")
	fs.IntVar(&o.tis, "tis", 64, "running task instances (ops); writer i uses instances i, i+W, ...")
	fs.IntVar(&o.keys, "keys", 20, "keys per task instance (ops)")
	fs.IntVar(&o.rows, "rows", 1_000_000, "expired rows (cleanup)")
	fs.IntVar(&o.reps, "reps", 3, "repetitions (the median is reported)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measuring time per writers × operation (ops)")
	fs.BoolVar(&o.inprocess, "inprocess", false, "serve the Execution API from this process on the benchmark's store (standalone's arrangement) instead of a `weir api-server` child")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write the api-server's CPU profile to this file (last repetition wins)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.writers, err = ints(writers); err != nil {
		return err
	}
	if o.batches, err = ints(batches); err != nil {
		return err
	}
	o.ops = strings.Split(ops, ",")
	if o.engine == "postgres" && o.dsn == "" {
		return errors.New("-engine postgres needs -dsn or WEIR_BENCH_POSTGRES_DSN")
	}
	host, _ := os.Hostname()
	fmt.Printf("# statebench engine=%s inprocess=%v reps=%d cores=%d host=%s go=%s load=%s\n", o.engine, o.inprocess, o.reps,
		runtime.NumCPU(), host, runtime.Version(), loadAvg())
	ctx := context.Background()
	for _, sc := range strings.Split(o.scenario, ",") {
		switch sc {
		case "ops":
			err = opsScenario(ctx, &o)
		case "cleanup":
			err = cleanupScenario(ctx, &o)
		default:
			err = fmt.Errorf("unknown scenario %q", sc)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stats summarizes latencies.
type stats struct {
	ops           int
	errs          int
	wall          time.Duration
	p50, p99, max time.Duration
	// calls counts every call, the warm-up's too, and cpu is the server's
	// CPU time (user and system) over all of them: cpu/calls does not
	// depend on how loaded the machine is, as ops/s and latencies do.
	calls int
	cpu   time.Duration
}

func summarize(lat []time.Duration, errs int, wall time.Duration) stats {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	s := stats{ops: len(lat), errs: errs, wall: wall}
	if len(lat) > 0 {
		s.p50, s.p99, s.max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	return s
}

func (s stats) rate() float64 { return float64(s.ops) / s.wall.Seconds() }

func (s stats) String() string {
	return fmt.Sprintf("ops=%d ops/s=%.0f p50=%.2fms p99=%.2fms max=%.2fms errors=%d server-cpu/op=%.0fµs", s.ops, s.rate(), ms(s.p50), ms(s.p99),
		ms(s.max), s.errs, s.cpuPerCall())
}

// cpuPerCall is the server's CPU time per call, in microseconds.
func (s stats) cpuPerCall() float64 {
	if s.calls == 0 {
		return 0
	}
	return float64(s.cpu.Microseconds()) / float64(s.calls)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// opsScenario measures set and get at each writer count.
func opsScenario(ctx context.Context, o *options) error {
	type cell struct {
		op string
		w  int
	}
	res := map[cell][]stats{}
	for rep := range o.reps {
		e, err := newEnv(ctx, o, fmt.Sprintf("ops%d", rep), o.tis)
		if err != nil {
			return err
		}
		err = func() error {
			if err := e.createRun(ctx, "ops", o.tis); err != nil {
				return err
			}
			if err := e.start(ctx); err != nil {
				return err
			}
			clients, err := e.runTries(ctx, o.tis)
			if err != nil {
				return err
			}
			for _, w := range o.writers {
				for _, op := range o.ops {
					cpu0 := e.serverCPU()
					s := hammer(ctx, clients, w, op, o.keys, o.duration)
					s.cpu = e.serverCPU() - cpu0
					fmt.Printf("rep %d: %s %s writers=%d %s load=%s\n", rep+1, o.engine, op, w, s, loadAvg())
					res[cell{op, w}] = append(res[cell{op, w}], s)
				}
			}
			return nil
		}()
		e.close()
		if err != nil {
			return err
		}
	}
	for _, w := range o.writers {
		for _, op := range o.ops {
			rs := res[cell{op, w}]
			fmt.Printf("MEDIAN %s %s writers=%d: ops/s=%.0f p50=%.2fms p99=%.2fms max=%.2fms server-cpu/op=%.0fµs\n", o.engine, op, w,
				med(rs, func(s stats) float64 { return s.rate() }), med(rs, func(s stats) float64 { return ms(s.p50) }),
				med(rs, func(s stats) float64 { return ms(s.p99) }), med(rs, func(s stats) float64 { return ms(s.max) }),
				med(rs, stats.cpuPerCall))
		}
	}
	return nil
}

// value is a typical task-state value (progress metadata, ~60 bytes).
func value(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"pages_done":%d,"of":10000,"status":"running"}`, n))
}

// hammer runs w closed-loop writers for d: writer i cycles over the keys of
// task instances i, i+w, i+2w, ... (each through its own try's client). A
// short warm-up is not counted.
func hammer(ctx context.Context, clients []*execclient.Client, w int, op string, keys int, d time.Duration) stats {
	var (
		mu    sync.Mutex
		all   []time.Duration
		errs  int
		calls int
		wg    sync.WaitGroup
	)
	start := time.Now()
	warm := start.Add(d / 10)
	stop := warm.Add(d)
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			ne, mine := 0, 0
			for n := 0; ; n++ {
				c := clients[(i+w*(n%max(1, len(clients)/w)))%len(clients)]
				key := "k" + strconv.Itoa(n%keys)
				t0 := time.Now()
				if t0.After(stop) {
					break
				}
				var err error
				switch op {
				case "set":
					err = c.StateSet(ctx, taskScope, key, value(n), "")
				case "emit":
					part := fmt.Sprintf("w%d-batch-%d", i, n)
					_, err = c.Emit(ctx, execclient.EmitRequest{Asset: core.AssetRef{Name: benchAsset.Name}, PartitionKey: &part,
						Extra: value(n)})
				default:
					_, err = c.StateGet(ctx, taskScope, key)
				}
				mine++
				if t0.Before(warm) {
					continue
				}
				if err != nil {
					ne++
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			errs += ne
			calls += mine
			mu.Unlock()
		}()
	}
	wg.Wait()
	s := summarize(all, errs, d)
	s.calls = calls
	return s
}

func med[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
