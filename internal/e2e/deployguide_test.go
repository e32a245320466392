package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// guideScript is what every task of guideDAG runs: it records the
// execution in executions.log ("run task try") first, so that a command run
// again for any reason shows as a second line.
const guideScript = `set -e
dir=$(dirname "${BASH_SOURCE[0]}")
echo "$WEIR_RUN_ID $WEIR_TASK_ID $WEIR_TRY_NUMBER" >> "$dir/executions.log"
echo "task $WEIR_TASK_ID try $WEIR_TRY_NUMBER of run $WEIR_RUN_ID"
case "$1" in
flaky)
  if [ "$WEIR_TRY_NUMBER" = 1 ]; then echo "try 1 fails on purpose" >&2; exit 1; fi ;;
state)
  weir task-state set progress "{\"try\": $WEIR_TRY_NUMBER}" ;;
defer)
  if [ -z "${WEIR_RESUME_METHOD:-}" ]; then
    weir defer timedelta '{"delta": "1s"}' --resume done
    exit 100
  fi ;;
slow)
  sleep 4 ;;
esac
`

// guideExecutions is how many times each task of guideDAG runs its command
// in a run where nothing goes wrong: the flaky task twice (its first try
// fails), the deferring task twice (it defers, then resumes).
var guideExecutions = map[string]int{"start": 1, "flaky": 2, "state": 1, "deferred": 2, "slow": 1, "end": 1}

// guideDAG runs guideScript's cases as shell tasks.
func guideDAG(script string) string {
	var b strings.Builder
	b.WriteString("dag_id: guide\nschedule: null\ndefault_args: {retries: 1, retry_delay: 1s}\ntasks:\n")
	for _, task := range []struct{ id, does, upstream string }{{"start", "work", ""}, {"flaky", "flaky", "start"},
		{"state", "state", "start"}, {"deferred", "defer", "start"}, {"slow", "slow", "start"}, {"end", "work", "[flaky, state, deferred, slow]"}} {
		fmt.Fprintf(&b, "  - task_id: %s\n    operator: bash\n    bash_command: source %q %s\n", task.id, script, task.does)
		if task.upstream != "" {
			fmt.Fprintf(&b, "    depends_on: %s\n", task.upstream)
		}
	}
	return b.String()
}

// TestDeploymentGuide follows docs/deployment.md on the built binary and
// PostgreSQL: the guide's weir.env (with this test's database, ports and
// load balancer), its key, TLS, migration, first-admin and
// worker-credential blocks run in bash, and two api-servers serving HTTPS
// (behind a round-robin load balancer), two schedulers, a triggerer and
// two workers started from its systemd units. Then: a worker SIGKILLed fails over within two worker
// heartbeats (the time is printed); a rolling restart of both api-servers
// and a 30 s outage of both lose nothing and rerun nothing (each command's
// executions counted); every task log reads the same from both
// api-servers and from the CLI; the guide's revocation of a worker
// credential is refused by both api-servers and the worker exits; the
// guide's key rotation keeps tokens of the old key valid until they expire.
func TestDeploymentGuide(t *testing.T) {
	t.Parallel()
	began := time.Now()
	f := newFleet(t)
	f.writeEnv(pgtest.DSN(t))
	f.sh("keys", false)
	f.sh("tls", false)
	f.sh("migrate", false)
	f.sh("admin", true)
	f.sh("worker.env", false)
	workers := []string{"worker-1", "worker-2"}
	for _, w := range workers {
		f.sh("worker-credential", true, "worker-1", w)
	}
	evidence := t.TempDir()
	script := filepath.Join(evidence, "task.sh")
	writeFile(t, script, guideScript)
	writeFile(t, filepath.Join(f.dags, "guide.yaml"), guideDAG(script))
	pidFile := filepath.Join(t.TempDir(), "slow.pid")
	writeFile(t, filepath.Join(f.dags, "handover.yaml"), slowFirstTryDAG("handover", pidFile))

	f.startAPI("api-a")
	f.startAPI("api-b")
	f.start("weir-scheduler.service", "", "scheduler-1")
	f.start("weir-scheduler.service", "", "scheduler-2")
	f.start("weir-triggerer.service", "", "triggerer")
	for _, w := range workers {
		f.start("weir-worker@.service", w, w)
	}
	admin := f.login(f.lbURL())
	admin.WaitDAG("guide")
	admin.WaitDAG("handover")
	t.Logf("the guide's deployment is up after %s", time.Since(began).Round(time.Second))

	// A worker SIGKILLed: its try fails over within two worker heartbeats,
	// long before the guide's 5 min task heartbeat timeout (which every
	// wait here is shorter than), and the other worker runs the retry.
	admin.Trigger("handover", "kill", nil)
	ti := admin.WaitTIState("handover", "kill", "slow", core.TIRunning)
	waitPIDFile(t, pidFile)
	victim := f.procs[ti.WorkerID]
	if victim == nil {
		t.Fatalf("try 1 runs on worker %q, want one of %v", ti.WorkerID, workers)
	}
	victim.Signal(t, syscall.SIGKILL)
	killed := time.Now()
	waitFor(t, "try 1 to be failed over", func() (bool, string) {
		cur := admin.TaskInstance("handover", "kill", "slow")
		ok := cur.TryNumber > 1 || cur.State != core.TIRunning
		status := fmt.Sprintf("try %d %s", cur.TryNumber, cur.State)
		if !ok && time.Since(killed) > weirtest.WaitLong-5*time.Second { // the failure's evidence
			status += "; `weir health`:\n" + f.health() + "database sessions:\n" + f.sessions()
		}
		return ok, status
	})
	t.Logf("worker SIGKILL → its try failed over in %s (the guide's [workers] heartbeat_interval 5s: two beats are 10s)",
		time.Since(killed).Round(10*time.Millisecond))
	admin.WaitRunSuccess("handover", "kill")
	if tries := admin.Tries("handover", "kill", "slow"); len(tries) != 2 || tries[1].WorkerID == ti.WorkerID {
		t.Errorf("tries of slow = %+v, want try 2 on the other worker", tries)
	}
	f.start("weir-worker@.service", ti.WorkerID, ti.WorkerID) // systemd's Restart=always

	// A rolling restart of both api-servers while runs go on.
	runs := []string{"r1", "r2"}
	for _, id := range runs {
		admin.Trigger("guide", id, nil)
	}
	admin.WaitTIState("guide", "r1", "slow", core.TIRunning)
	f.restartAPIs()

	// Both api-servers down for 30 s while runs go on.
	for _, id := range []string{"r3", "r4"} {
		admin.Trigger("guide", id, nil)
		runs = append(runs, id)
	}
	admin.WaitTIState("guide", "r3", "slow", core.TIRunning)
	for _, name := range []string{"api-a", "api-b"} {
		f.procs[name].Signal(t, syscall.SIGKILL)
		f.procs[name].WaitExit(t)
	}
	time.Sleep(30 * time.Second) // the outage lasts this long
	f.startAPI("api-a")
	f.startAPI("api-b")
	for _, id := range runs {
		admin.WaitRunSuccess("guide", id)
	}
	checkTaskLogs(t, f, admin, append([]string{"kill"}, runs...))

	// The guide's key rotation: a credential of the old key stays valid.
	probe := f.mint("probe", "--ttl", "90s")
	f.sh("rotate-add", false)
	f.restartAPIs()
	f.sh("rotate-promote", false)
	f.restartAPIs()
	if fresh := f.mint("probe-2"); keyID(t, fresh) == keyID(t, probe) {
		t.Errorf("after the guide's rotation new credentials are still signed with key %s", keyID(t, probe))
	}
	for _, api := range []string{"api-a", "api-b"} {
		if status, body := f.claim(api, probe); status != http.StatusOK {
			t.Errorf("%s refused a credential of the old key after the rotation: %d %s", api, status, body)
		}
	}

	// The guide's revocation of worker-2's credential.
	cred := strings.TrimPrefix(strings.TrimSpace(readFile(t, filepath.Join(f.etc, "worker-worker-2.env"))), "WEIR_WORKER_TOKEN=")
	f.sh("revoke", true, "worker-1", "worker-2")
	for _, api := range []string{"api-a", "api-b"} {
		waitFor(t, "worker-2's credential to be refused by "+api, func() (bool, string) {
			status, body := f.claim(api, cred)
			return status == http.StatusUnauthorized, fmt.Sprintf("%d %s", status, body)
		})
	}
	if code := f.procs["worker-2"].WaitExit(t); code == 0 || !strings.Contains(f.procs["worker-2"].Output(), "revoked") {
		t.Errorf("worker-2 exited %d after its revocation, want an error naming it:\n%s", code, f.procs["worker-2"].Output())
	}

	// worker-1 (its credential of the old key) runs a run alone.
	admin.Trigger("guide", "r5", nil)
	runs = append(runs, "r5")
	admin.WaitRunSuccess("guide", "r5")
	for _, ti := range admin.TaskInstances("guide", "r5") {
		if ti.WorkerID != "worker-1" {
			t.Errorf("r5's %s ran on %q, want worker-1 (worker-2 is revoked)", ti.TaskID, ti.WorkerID)
		}
	}
	checkExecutions(t, readFile(t, filepath.Join(evidence, "executions.log")), runs)

	// The old key's credential is refused once it expires, by both.
	for _, api := range []string{"api-a", "api-b"} {
		weirtest.WaitWithin(t, 2*weirtest.WaitLong, "the old key's credential to expire on "+api, func() (bool, string) {
			status, body := f.claim(api, probe)
			return status == http.StatusUnauthorized && strings.Contains(string(body), "expired"), fmt.Sprintf("%d %s", status, body)
		})
	}
	t.Logf("TestDeploymentGuide: %s of wall time", time.Since(began).Round(time.Second))
}

// checkExecutions: every task of every run ran its command as often as
// guideExecutions says, no more (nothing ran again) and no less.
func checkExecutions(t *testing.T, log string, runs []string) {
	t.Helper()
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			got[f[0]+" "+f[1]]++
		}
	}
	var bad []string
	for _, run := range runs {
		for task, want := range guideExecutions {
			if n := got[run+" "+task]; n != want {
				bad = append(bad, fmt.Sprintf("run %s task %s ran %d times, want %d", run, task, n, want))
			}
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("commands lost or run again:\n%s\nexecutions.log:\n%s", strings.Join(bad, "\n"), log)
	}
}

// checkTaskLogs: every task instance's log reads the same through each
// api-server, ends with the worker's line saying the try succeeded (no
// tail lost), and `weir tasks logs` on the admin machine prints it.
func checkTaskLogs(t *testing.T, f *fleet, admin *client, runs []string) {
	t.Helper()
	a, b := f.login(f.apiURL("api-a")), f.login(f.apiURL("api-b"))
	env := append(f.env(filepath.Join(f.etc, "weir.env")), "WEIR_HOME="+f.admin)
	for _, run := range runs {
		dag := "guide"
		if run == "kill" {
			dag = "handover"
		}
		for _, ti := range admin.TaskInstances(dag, run) {
			logA, logB := a.Log(dag, run, ti.TaskID, ti.TryNumber), b.Log(dag, run, ti.TaskID, ti.TryNumber)
			if logA != logB || !strings.Contains(logA, "try ended success") {
				t.Errorf("log of %s %s try %d: api-a has %q, api-b %q; want the same, ending with the try's success",
					run, ti.TaskID, ti.TryNumber, logA, logB)
				continue
			}
			out := mustWeir(t, env, "tasks", "logs", dag, run, ti.TaskID, "--try", strconv.Itoa(ti.TryNumber))
			if !strings.Contains(out, strings.TrimSpace(logA)) {
				t.Errorf("weir tasks logs %s %s %s printed %q, want the api-servers' %q", dag, run, ti.TaskID, out, logA)
			}
		}
	}
}

// mint issues a worker credential on the admin machine, with the guide's
// weir.env as it is now.
func (f *fleet) mint(worker string, args ...string) string {
	f.t.Helper()
	env := append(f.env(filepath.Join(f.etc, "weir.env")), "WEIR_HOME="+f.admin)
	return strings.TrimSpace(mustWeir(f.t, env, append([]string{"tokens", "create", "--worker", worker}, args...)...))
}

// claim asks an api-server for no queue's work with a worker credential,
// returning the status and body: 200 accepted, 401 refused.
func (f *fleet) claim(api, cred string) (int, []byte) {
	f.t.Helper()
	status, body, err := f.client(f.apiURL(api), cred).Try(http.MethodPost, "/execution/workloads/claim",
		execclient.ClaimRequest{Queues: []string{"nothing-queued-here"}, Limit: 1})
	if err != nil {
		f.t.Fatalf("claim on %s: %v", api, err)
	}
	return status, body
}

// keyID is the kid header of a JWT: the id of the key that signed it.
func keyID(t *testing.T, token string) string {
	t.Helper()
	head, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		KID string `json:"kid"`
	}
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	if err != nil || h.KID == "" {
		t.Fatalf("token header %q: no key id (%v)", head, err)
	}
	return h.KID
}
