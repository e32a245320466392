// Command enginebench measures Weir's core engine end to end, through the
// product stack that `weir standalone` runs: the api-server on loopback
// HTTP, the scheduler and a worker in one process, on SQLite or PostgreSQL.
//
// The measuring process starts a child standalone (this same binary in
// "serve" mode, which calls cli.Run with the benchmark DAGs and a registered
// Go no-op function), drives it only through the public REST API (login,
// trigger, poll, list task instances) and reads the child's peak RSS from
// getrusage when it exits. Each repetition is a fresh home, database and
// process, so the peak memory of a wide run belongs to that run alone.
//
// Scenarios:
//
//	wide      one run of 1,000 independent tasks: trigger → run success, as task instances/s
//	chain40   a chain of 40 sequential tasks: median hand-off (upstream end_date → downstream start_date)
//	chain300  the same with 300 tasks
//	defer10k  10,000 tasks starting from timedelta triggers that wait at once in the
//	          standalone's triggerer, fires spread over -defer-window: fire → resumed
//	          latency (p50, p99, max) and RSS while all wait (deferral.go)
//	deferrt   a chain of 100 tasks, each deferring on a 0 s timedelta: the deferral
//	          round trip (Defer → resumed) beside the chain's hand-off
//
// Kinds: go (operator "go", a registered no-op function, in-process) and
// bash (operator "bash", bash_command "true", a subprocess); the deferral
// scenarios are go only.
//
// Usage (see bench/run.sh):
//
//	enginebench -engine sqlite -kind go -scenario wide -reps 3
//	enginebench -engine sqlite -kind go -scenario defer10k,deferrt -defer-window 60s
//	enginebench -engine postgres -dsn postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable ...
//	enginebench spawns -n 300 -par 1,2,4,16   # raw `bash -c true` starts alone, at each concurrency
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for per-repetition databases

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(serve(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "role" { // a process of -workers N (fleet.go)
		os.Exit(serveRole(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "spawns" { // raw shell starts alone (spawn.go)
		if err := spawns(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "enginebench spawns:", err)
			os.Exit(2)
		}
		return
	}
	if err := drive(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "enginebench:", err)
		os.Exit(1)
	}
}

// serve runs `weir standalone` with the benchmark DAGs compiled in.
func serve(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if path := os.Getenv("WEIR_BENCH_CPUPROFILE"); path != "" { // profile the standalone
		f, err := os.Create(path) //nolint:gosec // the path is the operator's own environment variable
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	if path := os.Getenv("WEIR_BENCH_MEMPROFILE"); path != "" { // what the standalone allocated, written as it exits
		defer func() {
			if f, err := os.Create(path); err == nil { //nolint:gosec // as above
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if path := os.Getenv("WEIR_BENCH_TRACE"); path != "" { // an execution trace of the standalone
		f, err := os.Create(path) //nolint:gosec // the path is the operator's own environment variable
		if err == nil && trace.Start(f) == nil {
			defer func() { trace.Stop(); f.Close() }()
		}
	}
	reg := operator.NewRegistry()
	dags := benchDAGs()
	err := reg.Register("noop", func(context.Context, operator.TaskContext) (any, error) { return nil, nil })
	if path := os.Getenv(envLatencyFile); path != "" && err == nil { // a deferral scenario
		var more []core.DAG
		if more, err = deferDAGs(os.Getenv(envDeferSpread)); err == nil {
			dags = append(dags, more...)
			var f *os.File
			if f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil { //nolint:gosec // the driver's temporary file
				defer f.Close()
				err = registerDeferFunctions(reg, &latencyLog{f: f})
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return cli.Run(ctx, append([]string{"standalone"}, args...), cli.Options{DAGs: dags, Functions: reg})
}

// defaultHomes is where the repetitions' homes go unless -homes says: a
// folder under the user's home, as weir's default home ($HOME/weir), not
// /tmp.
func defaultHomes() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "weir-enginebench")
	}
	return os.TempDir()
}

// Sizes of the scenarios.
const (
	wideTasks = 1000
)

var chainLengths = map[string]int{"chain40": 40, "chain300": 300}

// dagID names the DAG of a scenario and kind, e.g. bench_wide_go.
func dagID(scenario, kind string) string { return "bench_" + scenario + "_" + kind }

func benchTask(kind, id string) core.Task {
	if kind == "bash" {
		return core.Task{TaskID: id, Operator: "bash", Args: map[string]any{"bash_command": "true"}}
	}
	return core.Task{TaskID: id, Operator: "go", Args: map[string]any{"function": "noop"}}
}

// benchDAGs returns every scenario's DAG for both kinds. The wide DAG sets
// max_active_tasks to its size (the default, 16 as in Airflow, would make
// the benchmark measure that limit); pools and worker slots keep their
// defaults.
func benchDAGs() []core.DAG {
	var out []core.DAG
	for _, kind := range []string{"go", "bash"} {
		wide := core.DAG{DagID: dagID("wide", kind), MaxActiveTasks: wideTasks, FileLoc: "go:enginebench"}
		for i := range wideTasks {
			wide.Tasks = append(wide.Tasks, benchTask(kind, fmt.Sprintf("t%04d", i)))
		}
		out = append(out, wide)
		for name, n := range chainLengths {
			chain := core.DAG{DagID: dagID(name, kind), FileLoc: "go:enginebench"}
			for i := range n {
				t := benchTask(kind, fmt.Sprintf("t%04d", i))
				if i > 0 {
					t.DependsOn = []string{fmt.Sprintf("t%04d", i-1)}
				}
				chain.Tasks = append(chain.Tasks, t)
			}
			out = append(out, chain)
		}
	}
	return out
}

type options struct {
	engine, dsn, kind, scenario, env string
	reps                             int
	workers                          int // > 0: separate processes, this many workers (fleet.go)
	keep, verbose                    bool
	homes                            string // the folder the repetitions' homes are made in
	timeout                          time.Duration
	deferLead, deferWindow           time.Duration
}

func drive(args []string) error {
	var o options
	fs := flag.NewFlagSet("enginebench", flag.ContinueOnError)
	fs.StringVar(&o.engine, "engine", "sqlite", "sqlite or postgres")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("WEIR_BENCH_POSTGRES_DSN"), "PostgreSQL maintenance DSN (a fresh database is created per repetition)")
	fs.StringVar(&o.kind, "kind", "go", "go (in-process no-op) or bash (subprocess `true`)")
	fs.StringVar(&o.scenario, "scenario", "wide", "wide, chain40, chain300, defer10k or deferrt (comma-separated for several)")
	fs.StringVar(&o.env, "env", "", "extra WEIR__SECTION__KEY=V settings for the standalone, comma-separated")
	fs.IntVar(&o.reps, "reps", 3, "repetitions per scenario (the median is reported)")
	fs.IntVar(&o.workers, "workers", 0, "PostgreSQL: run an api-server, a scheduler and this many worker processes instead of one standalone (0)")
	fs.BoolVar(&o.keep, "keep", false, "keep the repetitions' homes (by default they are removed together at the end)")
	fs.StringVar(&o.homes, "homes", defaultHomes(), "make each repetition's home (database, logs, run folder) in this folder; "+
		"the default is under $HOME, where weir's own default home is (on some file systems creating a file costs "+
		"several times more in /tmp: docs/benchmarks.md)")
	fs.BoolVar(&o.verbose, "v", false, "print the standalone's output")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up on a run after this long")
	fs.DurationVar(&o.deferLead, "defer-lead", 60*time.Second, "defer10k: the smallest delta (time for all 10,000 triggers to be created and claimed)")
	fs.DurationVar(&o.deferWindow, "defer-window", 120*time.Second, "defer10k: the fires are spread evenly over this window after the lead")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.engine == "postgres" && o.dsn == "" {
		return errors.New("-engine postgres needs -dsn or WEIR_BENCH_POSTGRES_DSN")
	}
	if err := os.MkdirAll(o.homes, 0o750); err != nil {
		return fmt.Errorf("-homes: %w", err)
	}
	// The repetitions' homes are removed together when the benchmark
	// ends, not each after its repetition: on ext4 without a journal (this
	// VM's disk) every inode allocation skips, one buffer lookup each, the
	// inodes freed in the last 60-360 s, so a repetition run after its
	// predecessor's thousands of log files were deleted paid up to twice
	// the CPU a task (docs/performance-history.md, fourteenth round). -keep keeps
	// them for a caller (bench/run.sh) that removes its homes at its end.
	homes, err := os.MkdirTemp(o.homes, "run-")
	if err != nil {
		return fmt.Errorf("-homes: %w", err)
	}
	if !o.keep {
		defer os.RemoveAll(homes) //nolint:errcheck // best effort, at exit
	}
	o.homes = homes
	host, _ := os.Hostname()
	fmt.Printf("# enginebench engine=%s kind=%s reps=%d workers=%d cores=%d host=%s go=%s homes=%s\n", o.engine, o.kind, o.reps, o.workers, numCPU(), host, goVersion(), o.homes)
	for _, sc := range strings.Split(o.scenario, ",") {
		var (
			results []result
			ratios  []float64
		)
		for rep := range o.reps {
			// The raw spawns are measured right before each repetition,
			// and the repetition compared with them: this host's speed
			// drifts by tens of percent within a minute.
			var spawns *spawnBaseline
			if o.kind == "bash" && !deferScenarios[sc] {
				b, err := measureSpawns(300)
				if err != nil {
					return err
				}
				fmt.Println("BASELINE", b)
				spawns = &b
			}
			r, err := once(&o, sc, rep)
			if err != nil {
				return fmt.Errorf("%s %s %s rep %d: %w", o.engine, o.kind, sc, rep+1, err)
			}
			fmt.Printf("rep %d: %s\n", rep+1, r)
			results = append(results, r)
			if spawns != nil {
				ratios = append(ratios, spawns.ratio(sc, r))
			}
		}
		m := median(results)
		fmt.Printf("MEDIAN %s %s %s: %s\n", o.engine, o.kind, sc, m)
		if len(ratios) > 0 {
			fmt.Println(ratioLine(sc, ratios))
		}
	}
	return nil
}

// result is one repetition's figures.
type result struct {
	tasks      int
	wall       time.Duration // trigger → run end_date
	handoff    time.Duration // median upstream end → downstream start (chains)
	handoffP90 time.Duration
	perTask    time.Duration // wall / tasks
	// cpuPerTask is the standalone's CPU time (every role, user + system)
	// from the trigger request to the run's end seen, per task: less
	// sensitive to other load on the machine than wall time.
	cpuPerTask time.Duration
	// childCPUPerTask is that of the tasks' processes (bash), per task.
	childCPUPerTask time.Duration
	peakRSSKB       int64
	load            float64 // 1-minute load average at the end
	// Deferral scenarios: the recorded latencies (fire → resumed, or
	// Defer → resumed), and for defer10k the RSS once all triggers waited
	// and how long after the trigger request that was.
	lat          latencies
	waitRSSKB    int64
	idleRSSKB    int64 // before the trigger request (deferral scenarios)
	waitingAfter time.Duration
}

func (r result) String() string {
	s := fmt.Sprintf("tasks=%d wall=%.3fs ti/s=%.0f per_task=%.2fms", r.tasks, r.wall.Seconds(),
		float64(r.tasks)/r.wall.Seconds(), ms(r.perTask))
	if r.cpuPerTask > 0 {
		s += fmt.Sprintf(" cpu_per_task=%.2fms", ms(r.cpuPerTask))
	}
	if r.childCPUPerTask > 0 {
		s += fmt.Sprintf(" child_cpu_per_task=%.2fms", ms(r.childCPUPerTask))
	}
	if r.handoff > 0 {
		s += fmt.Sprintf(" handoff_median=%.2fms handoff_p90=%.2fms", ms(r.handoff), ms(r.handoffP90))
	}
	if r.lat.max > 0 {
		s += fmt.Sprintf(" latency_p50=%.2fms p90=%.2fms p99=%.2fms max=%.2fms", ms(r.lat.p50), ms(r.lat.p90), ms(r.lat.p99), ms(r.lat.max))
	}
	if r.waitRSSKB > 0 {
		s += fmt.Sprintf(" all_waiting_after=%.1fs rss_idle=%.1fMiB rss_waiting=%.1fMiB", r.waitingAfter.Seconds(),
			float64(r.idleRSSKB)/1024, float64(r.waitRSSKB)/1024)
	}
	return s + fmt.Sprintf(" peak_rss=%.1fMiB load1=%.2f", float64(r.peakRSSKB)/1024, r.load)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median returns the per-field medians of rs.
func median(rs []result) result {
	dur := func(f func(result) time.Duration) time.Duration {
		return time.Duration(pick(rs, func(r result) float64 { return float64(f(r)) }))
	}
	return result{
		tasks:           rs[0].tasks,
		wall:            dur(func(r result) time.Duration { return r.wall }),
		handoff:         dur(func(r result) time.Duration { return r.handoff }),
		handoffP90:      dur(func(r result) time.Duration { return r.handoffP90 }),
		perTask:         dur(func(r result) time.Duration { return r.perTask }),
		cpuPerTask:      dur(func(r result) time.Duration { return r.cpuPerTask }),
		childCPUPerTask: dur(func(r result) time.Duration { return r.childCPUPerTask }),
		peakRSSKB:       int64(pick(rs, func(r result) float64 { return float64(r.peakRSSKB) })),
		load:            pick(rs, func(r result) float64 { return r.load }),
		lat: latencies{p50: dur(func(r result) time.Duration { return r.lat.p50 }), p90: dur(func(r result) time.Duration { return r.lat.p90 }),
			p99: dur(func(r result) time.Duration { return r.lat.p99 }), max: dur(func(r result) time.Duration { return r.lat.max })},
		waitRSSKB:    int64(pick(rs, func(r result) float64 { return float64(r.waitRSSKB) })),
		idleRSSKB:    int64(pick(rs, func(r result) float64 { return float64(r.idleRSSKB) })),
		waitingAfter: dur(func(r result) time.Duration { return r.waitingAfter }),
	}
}

// pick returns the median of f over rs.
func pick(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return medianOf(v)
}

// medianOf is the median of v (the mean of the middle two for an even
// count); it sorts v.
func medianOf(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// once runs one repetition of a scenario in a fresh standalone.
func once(o *options, scenario string, rep int) (res result, err error) {
	if deferScenarios[scenario] {
		return deferOnce(o, scenario, rep)
	}
	n := wideTasks
	if scenario != "wide" {
		var ok bool
		if n, ok = chainLengths[scenario]; !ok {
			return res, fmt.Errorf("unknown scenario %q", scenario)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	start := startStandalone
	if o.workers > 0 {
		start = startFleet
	}
	s, err := start(ctx, o, rep)
	if err != nil {
		return res, err
	}
	defer s.close()
	dag := dagID(scenario, o.kind)
	if err := s.ready(ctx, dag); err != nil {
		return res, err
	}

	cpu0, child0, err := s.cpu()
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	tis, runEnd, err := s.runOnce(ctx, dag, n, 20*time.Millisecond)
	if err != nil {
		return res, err
	}
	cpu1, child1, err := s.cpu()
	if err != nil {
		return res, err
	}
	res.cpuPerTask = (cpu1 - cpu0) / time.Duration(n)
	res.childCPUPerTask = (child1 - child0) / time.Duration(n)
	res.tasks = n
	res.wall = runEnd.Sub(t0)
	res.perTask = res.wall / time.Duration(n)
	if scenario != "wide" {
		res.handoff, res.handoffP90, err = handoffs(tis)
		if err != nil {
			return res, err
		}
	}
	res.load = loadAvg()
	if o.verbose {
		describe(tis, t0)
	}
	res.peakRSSKB, err = s.stop()
	return res, err
}

// runOnce triggers a run of dag, waits for it to succeed (polling every
// interval) and returns its n task instances and its end_date.
func (s *standalone) runOnce(ctx context.Context, dag string, n int, interval time.Duration) ([]taskInstance, time.Time, error) {
	runID, err := s.c.trigger(ctx, dag)
	if err != nil {
		return nil, time.Time{}, err
	}
	run, err := s.c.waitRun(ctx, dag, runID, interval)
	if err != nil {
		return nil, time.Time{}, err
	}
	if run.State != "success" || run.EndDate == nil {
		return nil, time.Time{}, fmt.Errorf("run %s ended %s (log: %s)", runID, run.State, s.log)
	}
	tis, err := s.c.taskInstances(ctx, dag, runID)
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(tis) != n {
		return nil, time.Time{}, fmt.Errorf("run %s has %d task instances, want %d", runID, len(tis), n)
	}
	return tis, *run.EndDate, nil
}

// handoffs returns the median and 90th percentile of the gaps between a
// task's end_date and its successor's start_date, in chain order.
func handoffs(tis []taskInstance) (med, p90 time.Duration, err error) {
	sort.Slice(tis, func(i, j int) bool { return tis[i].TaskID < tis[j].TaskID })
	var gaps []time.Duration
	for i := 1; i < len(tis); i++ {
		prev, cur := tis[i-1], tis[i]
		if prev.EndDate == nil || cur.StartDate == nil {
			return 0, 0, fmt.Errorf("task %s or %s has no dates", prev.TaskID, cur.TaskID)
		}
		gaps = append(gaps, cur.StartDate.Sub(*prev.EndDate))
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return gaps[len(gaps)/2], gaps[len(gaps)*9/10], nil
}

// freshDatabase creates an empty database on the server of dsn and returns
// its DSN and a function that drops it.
func freshDatabase(dsn, name string) (string, func(), error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", nil, err
	}
	ctx := context.Background()
	_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	out, err := withDatabase(dsn, name)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	return out, func() {
		_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		db.Close()
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscan(string(b), &l)
	return l
}

// describe prints where a run's time went: per task, queued → start
// (claim and /run) and start → end (the try itself, its log and /state).
func describe(tis []taskInstance, t0 time.Time) {
	var wait, dur []time.Duration
	var lastQueued, lastEnd time.Time
	firstStart := time.Now()
	for _, ti := range tis {
		if ti.QueuedAt != nil && ti.StartDate != nil && ti.EndDate != nil {
			wait = append(wait, ti.StartDate.Sub(*ti.QueuedAt))
			dur = append(dur, ti.EndDate.Sub(*ti.StartDate))
			if ti.QueuedAt.After(lastQueued) {
				lastQueued = *ti.QueuedAt
			}
			if ti.StartDate.Before(firstStart) {
				firstStart = *ti.StartDate
			}
			if ti.EndDate.After(lastEnd) {
				lastEnd = *ti.EndDate
			}
		}
	}
	q := func(d []time.Duration, p int) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return ms(d[len(d)*p/100])
	}
	fmt.Fprintf(os.Stderr, "queued->start p50=%.2fms p90=%.2fms; start->end p50=%.2fms p90=%.2fms; last queued at +%.3fs; first start at +%.3fs, last end at +%.3fs\n",
		q(wait, 50), q(wait, 90), q(dur, 50), q(dur, 90), lastQueued.Sub(t0).Seconds(), firstStart.Sub(t0).Seconds(), lastEnd.Sub(t0).Seconds())
}
