// Command watchbench measures asset watchers through the product: it runs
// the weir binary (-weir) on SQLite in a fresh home per scenario and
// reads the results from the REST API and the database.
//
// Scenarios:
//
//	latency  a sql_incremental watcher polling every 100 ms on a SQLite table; -items
//	         rows arrive one at a time, 150-450 ms apart; for each row, the time from
//	         its insert to the start of the first task of the consumer run that
//	         consumed its event (p50, p99, max)
//	burst    -burst rows inserted in one transaction; the time from the insert to the
//	         last of their events committed, as events/s, with max_items 10,000 (one
//	         poll, one commit) and with the default 1,000 (ten polls)
//	idle     -watchers directory watchers (distinct kwargs: one poll loop each) on an
//	         empty folder, in a triggerer process of their own: its RSS and CPU over
//	         -idle-window, at poll intervals 5 s (the default) and 1 s
//	emit     a running bash task emits -items events through the Execution API
//	         (weir assets emit), 150-450 ms apart; for each, the time from its commit
//	         to the start of the first task of the consumer run it created
//	         (asset_runs: per_event) (p50, p99, max)
//
// Usage (bench/run.sh WATCH=1):
//
//	go build -o /tmp/weir ./cmd/weir && go run ./bench/watchbench -weir /tmp/weir
package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the source table and the read-only look at weir.db
)

var (
	weirBin     = flag.String("weir", "weir", "the weir binary")
	scenarios   = flag.String("scenario", "latency,burst,idle", "scenarios to run, comma-separated")
	items       = flag.Int("items", 200, "latency: rows that arrive one at a time")
	burst       = flag.Int("burst", 10000, "burst: rows inserted at once")
	watchers    = flag.Int("watchers", 1000, "idle: watchers in one triggerer")
	idleWindow  = flag.Duration("idle-window", 60*time.Second, "idle: how long CPU is measured")
	keepHome    = flag.Bool("keep", false, "keep each scenario's home folder")
	adminSecret = "bench-secret"
)

func main() {
	flag.Parse()
	for _, s := range strings.Split(*scenarios, ",") {
		var err error
		switch s {
		case "latency":
			err = latency()
		case "burst":
			err = burstRate()
		case "idle":
			err = idle()
		case "emit":
			err = emitLatency()
		default:
			err = fmt.Errorf("unknown scenario %q", s)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "watchbench %s: %v\n", s, err)
			os.Exit(1)
		}
	}
}

// deployment is one weir home with its processes.
type deployment struct {
	home, dags, src string
	port            int
	env             []string
	procs           []*exec.Cmd
	token           string
}

func newDeployment() (*deployment, error) {
	home, err := os.MkdirTemp("", "watchbench-")
	if err != nil {
		return nil, err
	}
	d := &deployment{home: home, dags: filepath.Join(home, "dags"), src: filepath.Join(home, "source.db"), port: freePort()}
	d.env = append(os.Environ(), "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false",
		"WEIR__SCHEDULER__DAG_DIR_LIST_INTERVAL=1s", "WEIR__API__PORT="+strconv.Itoa(d.port),
		"WEIR_CONN_SOURCE=sqlite:///"+d.src)
	return d, os.MkdirAll(d.dags, 0o750)
}

// start runs weir args in the background, its output in the home.
func (d *deployment) start(name string, args ...string) (*exec.Cmd, error) {
	out, err := os.Create(filepath.Join(d.home, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(*weirBin, append(args, "--home", d.home)...) //nolint:gosec // the operator's binary
	cmd.Env, cmd.Stdout, cmd.Stderr = d.env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d.procs = append(d.procs, cmd)
	return cmd, nil
}

// run runs a short weir command.
func (d *deployment) run(args ...string) (string, error) {
	cmd := exec.Command(*weirBin, append(args, "--home", d.home)...) //nolint:gosec // the operator's binary
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// standalone starts weir standalone and logs in.
func (d *deployment) standalone() error {
	if _, err := d.start("standalone", "standalone", "--dags", d.dags, "--port", strconv.Itoa(d.port)); err != nil {
		return err
	}
	return waitFor(time.Minute, "the api-server", func() bool {
		resp, err := http.Get(d.url("/api/v2/monitor/health"))
		if err == nil {
			_ = resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
}

func (d *deployment) url(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(d.port) + path
}

// get calls the REST API as the admin user (a token made on first use).
func (d *deployment) get(path string, out any) error {
	if d.token == "" {
		if _, err := d.run("users", "create", "--username", "bench", "--role", "admin", "--password", adminSecret); err != nil {
			return err
		}
		tok, err := d.run("tokens", "create", "--user", "bench")
		if err != nil {
			return fmt.Errorf("token: %w: %s", err, tok)
		}
		d.token = strings.TrimSpace(tok)
	}
	req, _ := http.NewRequest(http.MethodGet, d.url(path), nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

// stop stops every process and removes the home unless -keep.
func (d *deployment) stop() {
	for _, p := range d.procs {
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		_, _ = p.Process.Wait()
	}
	if !*keepHome {
		_ = os.RemoveAll(d.home)
	} else {
		fmt.Println("  home:", d.home)
	}
}

// weirDB opens the deployment's database read-only.
func (d *deployment) weirDB() (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+filepath.Join(d.home, "weir.db")+"?mode=ro")
}

// source creates the watched table in the source database.
func (d *deployment) source() (*sql.DB, error) {
	db, err := sql.Open("sqlite", d.src+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	_, err = db.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, arrived_us INTEGER NOT NULL)`)
	return db, err
}

// watchedDag is a DAG whose asset "items" is watched by sql_incremental
// with extra kwargs, and whose task "first" runs on its events when
// consume is set.
func watchedDag(id string, consume bool, extra string) string {
	schedule := ""
	if consume {
		schedule = "schedule: [items]\n"
	}
	return fmt.Sprintf(`dag_id: %s
%sassets:
  - name: items
    uri: "sqlite://bench/items"
    watchers:
      - name: rows
        trigger: {type: sql_incremental, conn_id: source, table: items, updated_column: id, key_column: id%s}
tasks:
  - task_id: first
    operator: bash
    bash_command: "true"
`, id, schedule, extra)
}

func latency() error {
	d, err := newDeployment()
	if err != nil {
		return err
	}
	defer d.stop()
	src, err := d.source()
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.WriteFile(filepath.Join(d.dags, "lat.yaml"), []byte(watchedDag("watch_latency", true, ", poll_interval: 100ms")), 0o600); err != nil {
		return err
	}
	if err := d.standalone(); err != nil {
		return err
	}
	if err := waitWatcher(d); err != nil {
		return err
	}
	for i := range *items {
		if _, err := src.Exec(`INSERT INTO items (id, arrived_us) VALUES (?, ?)`, i+1, time.Now().UnixMicro()); err != nil {
			return err
		}
		time.Sleep(150*time.Millisecond + time.Duration(rand.Int64N(int64(300*time.Millisecond)))) //nolint:gosec // pacing
	}
	var lat []time.Duration
	err = waitFor(2*time.Minute, "every row's run to start", func() bool {
		lat, err = latencies(d)
		return err == nil && len(lat) == *items
	})
	if err != nil {
		return fmt.Errorf("%w (%d of %d rows measured)", err, len(lat), *items)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("latency: %d rows, poll 100ms: arrival -> consumer's first task started p50 %s p99 %s max %s\n",
		len(lat), ms(pct(lat, 50)), ms(pct(lat, 99)), ms(lat[len(lat)-1]))
	return nil
}

// latencies pairs each consumed row with its run's first task start.
func latencies(d *deployment) ([]time.Duration, error) {
	return firstTaskDelays(d, "watch_latency", func(e consumedEvent) time.Time { return time.UnixMicro(e.Extra.ArrivedUS) })
}

// consumedEvent is what the scenarios read of an event a run consumed.
type consumedEvent struct {
	Timestamp time.Time `json:"timestamp"`
	Extra     struct {
		ArrivedUS int64 `json:"arrived_us"`
	} `json:"extra"`
}

// firstTaskDelays returns, for each event each run of dagID consumed,
// the time from since(event) to the start of the run's task "first".
func firstTaskDelays(d *deployment, dagID string, since func(consumedEvent) time.Time) ([]time.Duration, error) {
	st, err := firstTaskStages(d, dagID, since)
	out := make([]time.Duration, len(st))
	for i, s := range st {
		out[i] = s.total()
	}
	return out, err
}

// stages splits one event's delay to its consumer's first task: since the
// event to the run's creation (queued_at), to the task's queueing
// (queued_dttm), to its start (start_date).
type stages struct{ run, queue, start time.Duration }

func (s stages) total() time.Duration { return s.run + s.queue + s.start }

// firstTaskStages is firstTaskDelays split into stages.
func firstTaskStages(d *deployment, dagID string, since func(consumedEvent) time.Time) ([]stages, error) {
	var runs struct {
		DagRuns []struct {
			RunID    string    `json:"dag_run_id"`
			QueuedAt time.Time `json:"queued_at"`
		} `json:"dag_runs"`
	}
	if err := d.get("/api/v2/dags/"+dagID+"/dagRuns?limit=1000", &runs); err != nil {
		return nil, err
	}
	var out []stages
	for _, r := range runs.DagRuns {
		var ti struct {
			QueuedAt  *time.Time `json:"queued_dttm"`
			StartDate *time.Time `json:"start_date"`
		}
		base := "/api/v2/dags/" + dagID + "/dagRuns/" + r.RunID
		if err := d.get(base+"/taskInstances/first", &ti); err != nil {
			return nil, err
		}
		if ti.StartDate == nil || ti.QueuedAt == nil {
			return nil, errors.New("run " + r.RunID + " has not started")
		}
		var evs struct {
			AssetEvents []consumedEvent `json:"asset_events"`
		}
		if err := d.get(base+"/upstreamAssetEvents?limit=1000", &evs); err != nil {
			return nil, err
		}
		for _, e := range evs.AssetEvents {
			out = append(out, stages{run: r.QueuedAt.Sub(since(e)), queue: ti.QueuedAt.Sub(r.QueuedAt),
				start: ti.StartDate.Sub(*ti.QueuedAt)})
		}
	}
	return out, nil
}

func burstRate() error {
	for _, maxItems := range []int{10000, 1000} {
		d, err := newDeployment()
		if err != nil {
			return err
		}
		err = burstOnce(d, maxItems)
		d.stop()
		if err != nil {
			return err
		}
	}
	return nil
}

func burstOnce(d *deployment, maxItems int) error {
	src, err := d.source()
	if err != nil {
		return err
	}
	defer src.Close()
	kw := fmt.Sprintf(", poll_interval: 100ms, max_items: %d", maxItems)
	if err := os.WriteFile(filepath.Join(d.dags, "burst.yaml"), []byte(watchedDag("watch_burst", true, kw)), 0o600); err != nil {
		return err
	}
	if err := d.standalone(); err != nil {
		return err
	}
	if err := waitWatcher(d); err != nil {
		return err
	}
	db, err := d.weirDB()
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := src.Begin()
	if err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	for i := range *burst {
		if _, err := tx.Exec(`INSERT INTO items (id, arrived_us) VALUES (?, ?)`, i+1, now); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := tx.Commit(); err != nil {
		return err
	}
	var first time.Duration
	err = waitFor(2*time.Minute, "every row's event", func() bool {
		var n int
		if db.QueryRow(`SELECT COUNT(*) FROM asset_event`).Scan(&n) != nil {
			return false
		}
		if n > 0 && first == 0 {
			first = time.Since(start)
		}
		return n == *burst
	})
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("burst: %d rows, max_items %d: first event after %s, all committed after %s: %.0f events/s\n",
		*burst, maxItems, ms(first), ms(took), float64(*burst)/took.Seconds())
	return nil
}

func idle() error {
	for _, interval := range []string{"5s", "1s"} {
		d, err := newDeployment()
		if err != nil {
			return err
		}
		err = idleOnce(d, interval)
		d.stop()
		if err != nil {
			return err
		}
	}
	return nil
}

func idleOnce(d *deployment, interval string) error {
	empty := filepath.Join(d.home, "empty")
	if err := os.MkdirAll(empty, 0o750); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "dag_id: watch_idle\nassets:\n")
	for i := range *watchers {
		fmt.Fprintf(&b, "  - name: a%04d\n    watchers:\n      - name: w\n        trigger: {type: directory, path: %q, glob: \"f%04d-*.csv\", poll_interval: %s}\n",
			i, empty, i, interval)
	}
	fmt.Fprintf(&b, "tasks:\n  - task_id: t\n    operator: noop\n")
	if err := os.WriteFile(filepath.Join(d.dags, "idle.yaml"), b.Bytes(), 0o600); err != nil {
		return err
	}
	if out, err := d.run("db", "migrate"); err != nil {
		return fmt.Errorf("migrate: %w: %s", err, out)
	}
	if _, err := d.start("scheduler", "scheduler", "--dags", d.dags); err != nil {
		return err
	}
	trg, err := d.start("triggerer", "triggerer")
	if err != nil {
		return err
	}
	db, err := d.weirDB()
	if err != nil {
		return err
	}
	defer db.Close()
	if err := waitFor(3*time.Minute, "every watcher to run", func() bool {
		var n int
		return db.QueryRow(`SELECT COUNT(*) FROM trigger WHERE triggerer_id IS NOT NULL`).Scan(&n) == nil && n == *watchers
	}); err != nil {
		return err
	}
	time.Sleep(10 * time.Second) // every loop started and polled
	cpu0, at := cpuTicks(trg.Process.Pid), time.Now()
	time.Sleep(*idleWindow)
	cpu := float64(cpuTicks(trg.Process.Pid)-cpu0) / 100 / time.Since(at).Seconds()
	fmt.Printf("idle: %d directory watchers, poll %s, one triggerer: RSS %.1f MiB, CPU %.1f%% of a core over %s\n",
		*watchers, interval, rssMiB(trg.Process.Pid), 100*cpu, *idleWindow)
	return nil
}

// waitWatcher waits until the deployment's watcher has polled once.
func waitWatcher(d *deployment) error {
	db, err := d.weirDB()
	if err != nil {
		return err
	}
	defer db.Close()
	return waitFor(2*time.Minute, "the watcher's first poll", func() bool {
		var n int
		return db.QueryRow(`SELECT COUNT(*) FROM asset_watcher WHERE last_poll_at IS NOT NULL`).Scan(&n) == nil && n > 0
	})
}

// cpuTicks is a process's user + system time in clock ticks (1/100 s).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// rssMiB is a process's resident set.
func rssMiB(pid int) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func waitFor(limit time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 18080
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
