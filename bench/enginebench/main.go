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
//
// Kinds: go (operator "go", a registered no-op function, in-process) and
// bash (operator "bash", bash_command "true", a subprocess).
//
// Usage (see bench/run.sh):
//
//	enginebench -engine sqlite -kind go -scenario wide -reps 3
//	enginebench -engine postgres -dsn postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable ...
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
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
	reg := operator.NewRegistry()
	if err := reg.Register("noop", func(context.Context, operator.TaskContext) (any, error) { return nil, nil }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := cli.Run(ctx, append([]string{"standalone"}, args...), cli.Options{DAGs: benchDAGs(), Functions: reg})
	return code
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
	keep, verbose                    bool
	timeout                          time.Duration
}

func drive(args []string) error {
	var o options
	fs := flag.NewFlagSet("enginebench", flag.ContinueOnError)
	fs.StringVar(&o.engine, "engine", "sqlite", "sqlite or postgres")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("WEIR_BENCH_POSTGRES_DSN"), "PostgreSQL maintenance DSN (a fresh database is created per repetition)")
	fs.StringVar(&o.kind, "kind", "go", "go (in-process no-op) or bash (subprocess `true`)")
	fs.StringVar(&o.scenario, "scenario", "wide", "wide, chain40 or chain300 (comma-separated for several)")
	fs.StringVar(&o.env, "env", "", "extra WEIR__SECTION__KEY=V settings for the standalone, comma-separated")
	fs.IntVar(&o.reps, "reps", 3, "repetitions per scenario (the median is reported)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary homes")
	fs.BoolVar(&o.verbose, "v", false, "print the standalone's output")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up on a run after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.engine == "postgres" && o.dsn == "" {
		return errors.New("-engine postgres needs -dsn or WEIR_BENCH_POSTGRES_DSN")
	}
	host, _ := os.Hostname()
	fmt.Printf("# enginebench engine=%s kind=%s reps=%d cores=%d host=%s go=%s\n", o.engine, o.kind, o.reps, numCPU(), host, goVersion())
	for _, sc := range strings.Split(o.scenario, ",") {
		var results []result
		for rep := range o.reps {
			r, err := once(&o, sc, rep)
			if err != nil {
				return fmt.Errorf("%s %s %s rep %d: %w", o.engine, o.kind, sc, rep+1, err)
			}
			fmt.Printf("rep %d: %s\n", rep+1, r)
			results = append(results, r)
		}
		fmt.Printf("MEDIAN %s %s %s: %s\n", o.engine, o.kind, sc, median(results))
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
	peakRSSKB  int64
	load       float64 // 1-minute load average at the end
}

func (r result) String() string {
	s := fmt.Sprintf("tasks=%d wall=%.3fs ti/s=%.0f per_task=%.2fms", r.tasks, r.wall.Seconds(),
		float64(r.tasks)/r.wall.Seconds(), ms(r.perTask))
	if r.handoff > 0 {
		s += fmt.Sprintf(" handoff_median=%.2fms handoff_p90=%.2fms", ms(r.handoff), ms(r.handoffP90))
	}
	return s + fmt.Sprintf(" peak_rss=%.1fMiB load1=%.2f", float64(r.peakRSSKB)/1024, r.load)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median returns the per-field medians of rs.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return result{
		tasks:      rs[0].tasks,
		wall:       time.Duration(pick(func(r result) float64 { return float64(r.wall) })),
		handoff:    time.Duration(pick(func(r result) float64 { return float64(r.handoff) })),
		handoffP90: time.Duration(pick(func(r result) float64 { return float64(r.handoffP90) })),
		perTask:    time.Duration(pick(func(r result) float64 { return float64(r.perTask) })),
		peakRSSKB:  int64(pick(func(r result) float64 { return float64(r.peakRSSKB) })),
		load:       pick(func(r result) float64 { return r.load }),
	}
}

// once runs one repetition of a scenario in a fresh standalone.
func once(o *options, scenario string, rep int) (res result, err error) {
	n := wideTasks
	if scenario != "wide" {
		var ok bool
		if n, ok = chainLengths[scenario]; !ok {
			return res, fmt.Errorf("unknown scenario %q", scenario)
		}
	}
	home, err := os.MkdirTemp("", "enginebench-")
	if err != nil {
		return res, err
	}
	if !o.keep {
		defer os.RemoveAll(home)
	}
	dags := filepath.Join(home, "dags")
	if err := os.MkdirAll(dags, 0o750); err != nil {
		return res, err
	}
	port, err := freePort()
	if err != nil {
		return res, err
	}
	env := append(os.Environ(), "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false")
	if o.engine == "postgres" {
		dsn, drop, err := freshDatabase(o.dsn, fmt.Sprintf("enginebench_%d_%d", os.Getpid(), rep))
		if err != nil {
			return res, err
		}
		defer drop()
		env = append(env, "WEIR__DATABASE__CONN="+dsn)
	}
	for _, kv := range strings.Split(o.env, ",") {
		if kv != "" {
			env = append(env, kv)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return res, err
	}
	cmd := exec.Command(self, "serve", "--home", home, "--dags", dags, "--port", fmt.Sprint(port))
	cmd.Env = env
	logf, err := os.Create(filepath.Join(home, "standalone.log"))
	if err != nil {
		return res, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if o.verbose {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	c := &client{base: fmt.Sprintf("http://127.0.0.1:%d/api/v2", port)}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if err := c.waitHealthy(ctx); err != nil {
		return res, fmt.Errorf("standalone did not become healthy (log: %s): %w", logf.Name(), err)
	}
	pw, err := os.ReadFile(filepath.Join(home, "secrets", "admin_password"))
	if err != nil {
		return res, err
	}
	if err := c.login(ctx, "admin", strings.TrimSpace(string(pw))); err != nil {
		return res, err
	}
	dag := dagID(scenario, o.kind)
	if err := c.waitDag(ctx, dag); err != nil {
		return res, err
	}
	// Let the scheduler's first passes and the DAG processor's first sync
	// settle so that they are not counted.
	time.Sleep(500 * time.Millisecond)

	t0 := time.Now()
	runID, err := c.trigger(ctx, dag)
	if err != nil {
		return res, err
	}
	run, err := c.waitRun(ctx, dag, runID)
	if err != nil {
		return res, err
	}
	if run.State != "success" || run.EndDate == nil {
		return res, fmt.Errorf("run %s ended %s", runID, run.State)
	}
	tis, err := c.taskInstances(ctx, dag, runID)
	if err != nil {
		return res, err
	}
	if len(tis) != n {
		return res, fmt.Errorf("run %s has %d task instances, want %d", runID, len(tis), n)
	}
	res.tasks = n
	res.wall = run.EndDate.Sub(t0)
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

	_ = cmd.Process.Signal(syscall.SIGTERM)
	werr := cmd.Wait()
	exited = true
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.peakRSSKB = ru.Maxrss // kilobytes on Linux
	}
	if werr != nil {
		return res, fmt.Errorf("standalone exited: %w (log: %s)", werr, logf.Name())
	}
	return res, nil
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
	var lastQueued time.Time
	for _, ti := range tis {
		if ti.QueuedAt != nil && ti.StartDate != nil && ti.EndDate != nil {
			wait = append(wait, ti.StartDate.Sub(*ti.QueuedAt))
			dur = append(dur, ti.EndDate.Sub(*ti.StartDate))
			if ti.QueuedAt.After(lastQueued) {
				lastQueued = *ti.QueuedAt
			}
		}
	}
	q := func(d []time.Duration, p int) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return ms(d[len(d)*p/100])
	}
	fmt.Fprintf(os.Stderr, "queued->start p50=%.2fms p90=%.2fms; start->end p50=%.2fms p90=%.2fms; last queued at +%.3fs\n",
		q(wait, 50), q(wait, 90), q(dur, 50), q(dur, 90), lastQueued.Sub(t0).Seconds())
}
