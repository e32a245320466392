package chaos

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// role is one weir process of a deployment.
type role struct {
	name string
	args func(d *deployment) []string
	// serves says the role serves the REST API: after a restart the suite
	// waits until the API answers.
	serves bool
	// ready, if set, is what the role prints once it is ready; after a
	// restart the suite waits for it (a worker prints it once it has
	// reported the tries its previous life finished).
	ready *regexp.Regexp
	// runsTasks says the role runs task commands: killing it kills tries,
	// which the scheduler fails only after the heartbeat timeout, so that
	// timeout is short where it is the victim. Elsewhere it is longer than
	// any outage a fault causes, so that no try is failed for the outage.
	runsTasks bool
}

// workerStarted is what a worker prints once it is ready to claim.
var workerStarted = regexp.MustCompile(`msg="worker started" worker_id=`)

// standalone runs every role in one process, on SQLite.
var standalone = role{name: "standalone", serves: true, ready: workerStarted, runsTasks: true,
	args: func(d *deployment) []string {
		return []string{"standalone", "--home", d.home, "--dags", d.dags, "--port", strconv.Itoa(d.port)}
	}}

// roles are the processes of a deployment on PostgreSQL, in start order.
// Each is SIGKILLed in a scenario of its own: adding a role (the
// triggerer) to the suite is one entry here.
var roles = []role{
	{name: "api-server", serves: true, args: func(d *deployment) []string { return []string{"api-server", "--home", d.home} }},
	{name: "scheduler", args: func(d *deployment) []string { return []string{"scheduler", "--home", d.home, "--dags", d.dags} }},
	{name: "triggerer", args: func(d *deployment) []string { return []string{"triggerer", "--home", d.home} }},
	{name: "worker", ready: workerStarted, runsTasks: true, args: func(d *deployment) []string {
		return []string{"worker", "--home", d.home, "--api-url", d.workerURL, "--name", "w1"}
	}},
}

// Heartbeat timeouts: short where a role that runs tasks is killed, longer
// than any outage elsewhere.
const (
	shortHeartbeatTimeout = 8 * time.Second
	longHeartbeatTimeout  = 30 * time.Second
)

// deployment is Weir running the mixed DAG, with the runs the suite
// triggered and what it saw committed.
type deployment struct {
	t         *testing.T
	scenario  string
	rng       *rand.Rand
	roles     []role
	procs     map[string]*weirtest.Proc
	bin       string // the weir binary every role runs
	home      string
	dags      string
	ev        evidence
	env       []string
	port      int
	base      string // the REST API, http://127.0.0.1:port
	workerURL string // where workers reach the API (a proxy may stand between)
	api       *weirtest.Client
	runs      []string
	checked   int            // runs[:checked] were checked by an earlier trial
	events    map[int64]bool // asset events the API listed before a fault
	kills     []time.Time    // when a role running tasks was SIGKILLed
	fig       figures
	started   time.Time
}

// deploymentOptions shape a deployment.
type deploymentOptions struct {
	postgres string // DSN; "" = standalone on SQLite
	// heartbeatTimeout is [scheduler] task_instance_heartbeat_timeout;
	// 0 = longHeartbeatTimeout.
	heartbeatTimeout time.Duration
	home             string   // "" = a temporary folder
	env              []string // more WEIR__ settings
	bin              string   // "" = weirBin
	workerURL        func(base string) string
}

// deploy starts Weir with the mixed DAG and waits until the DAG is loaded.
func deploy(t *testing.T, scenario string, o deploymentOptions) *deployment {
	t.Helper()
	d := &deployment{t: t, scenario: scenario, rng: rngFor(scenario), procs: map[string]*weirtest.Proc{},
		bin: cmp.Or(o.bin, weirBin), home: o.home, dags: t.TempDir(), ev: newEvidence(t), port: stablePort(t),
		events: map[int64]bool{}, started: time.Now()}
	d.fig.scenario = scenario
	if d.home == "" {
		d.home = t.TempDir()
	}
	d.base = "http://127.0.0.1:" + strconv.Itoa(d.port)
	d.workerURL = d.base
	if o.workerURL != nil {
		d.workerURL = o.workerURL(d.base)
	}
	d.env = append([]string{
		"WEIR__API__PORT=" + strconv.Itoa(d.port),
		"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=" + cmp.Or(o.heartbeatTimeout, longHeartbeatTimeout).String(),
		"WEIR__WORKERS__CONCURRENCY=6",
		// A killed triggerer's triggers move to its next life within 1.5 s.
		"WEIR__TRIGGERER__HEARTBEAT_INTERVAL=1s",
	}, o.env...)
	weirtest.WriteFile(t, filepath.Join(d.dags, dagID+".yaml"), mixedDAG(d.ev.script()))
	if o.postgres == "" {
		d.roles = []role{standalone}
		d.start(standalone)
	} else {
		d.env = append(d.env, "WEIR__DATABASE__CONN="+o.postgres)
		d.weir("db", "migrate", "--home", d.home)
		d.weir("users", "create", "--username", "admin", "--role", "admin", "--password", "chaos-secret", "--home", d.home)
		d.roles = roles
		for _, r := range roles {
			d.start(r)
		}
	}
	token := strings.TrimSpace(d.weir("tokens", "create", "--user", "admin", "--home", d.home))
	d.api = weirtest.NewClient(t, d.base, token)
	d.api.WaitDAG(dagID)
	return d
}

// weir runs a weir command on the deployment's home and database.
func (d *deployment) weir(args ...string) string {
	d.t.Helper()
	return weirtest.MustRun(d.t, d.bin, d.env, args...)
}

// start starts a role and waits until it is ready.
func (d *deployment) start(r role) {
	d.t.Helper()
	p := weirtest.StartProc(d.t, d.bin, d.scenario+" "+r.name, d.env, r.args(d)...)
	d.procs[r.name] = p
	if r.ready != nil {
		p.WaitOutput(d.t, r.ready)
	}
	if r.serves {
		weirtest.NewClient(d.t, d.base, "").WaitHealthy()
	}
}

// role returns the deployment's role named name.
func (d *deployment) role(name string) role {
	for _, r := range d.roles {
		if r.name == name {
			return r
		}
	}
	d.t.Fatalf("%s has no role %q", d.scenario, name)
	return role{}
}

// kill SIGKILLs a role's process (only it, as in a real crash: its task
// processes are left to the product) and starts it again.
func (d *deployment) kill(name string) {
	d.t.Helper()
	p := d.procs[name]
	if p.Exited() {
		d.t.Fatalf("%s exited by itself before it was killed:\n%s", name, p.Output())
	}
	if d.role(name).runsTasks {
		d.kills = append(d.kills, time.Now())
	}
	p.Signal(d.t, syscall.SIGKILL)
	p.WaitExit(d.t)
	d.fig.faults++
	d.start(d.role(name))
}

// pause waits a random moment between shortest and longest: when the
// next fault strikes.
func (d *deployment) pause(shortest, longest time.Duration) {
	time.Sleep(shortest + time.Duration(d.rng.Int64N(int64(longest-shortest))))
}

// keepRunning triggers a run when fewer than want of the suite's runs are
// unfinished, so that there is always work for a fault to strike.
func (d *deployment) keepRunning(want int) {
	d.t.Helper()
	active := 0
	for _, id := range d.runs[d.checked:] {
		if !d.api.Run(dagID, id).State.Terminal() {
			active++
		}
	}
	for ; active < want; active++ {
		d.trigger()
	}
}

// trigger creates the next run. A trigger answered by a crash may have
// been committed: the retry's 409 (the run exists) counts as done.
func (d *deployment) trigger() {
	d.t.Helper()
	id := fmt.Sprintf("r%04d", len(d.runs)+1)
	weirtest.WaitFor(d.t, "run "+id+" to be created", func() (bool, string) {
		status, b, err := d.api.Try(http.MethodPost, "/api/v2/dags/"+dagID+"/dagRuns", map[string]any{"dag_run_id": id})
		if err != nil {
			return false, err.Error()
		}
		return status/100 == 2 || status == http.StatusConflict, fmt.Sprintf("status %d: %s", status, b)
	})
	d.runs = append(d.runs, id)
}

// settle waits until every run triggered has finished.
func (d *deployment) settle() {
	d.t.Helper()
	for _, id := range d.runs[d.checked:] {
		weirtest.WaitWithin(d.t, 3*weirtest.WaitLong, fmt.Sprintf("run %s of %s to finish", id, d.scenario), func() (bool, string) {
			run := d.api.Run(dagID, id)
			return run.State.Terminal(), d.api.DescribeRun(dagID, id, run)
		})
	}
}

// finish records the scenario's figures; call it once, deferred.
func (d *deployment) finish() {
	d.fig.elapsed = time.Since(d.started)
	record(d.fig)
}

// stablePort returns a loopback port, free a moment ago, below the
// kernel's ephemeral range: a killed role restarts on the same port, and an
// ephemeral one could meanwhile be taken by any outgoing connection.
func stablePort(t *testing.T) int {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			low, _ = strconv.Atoi(f[0])
		}
	}
	for range 100 {
		port := 10000 + rand.IntN(max(low-10000, 1000)) //nolint:gosec // a port, not a secret
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			_ = l.Close()
			return port
		}
	}
	t.Fatalf("no free loopback port between 10000 and %d", low)
	return 0
}
