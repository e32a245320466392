package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// callbacksDAG fails its task on both tries; every callback event of the
// task and the run fires, one failure callback fails itself.
const callbacksDAG = `dag_id: cb_demo
schedule: null
on_failure: 'echo "run {{ .run_id }} of {{ .dag_id }} ended {{ .callback.outcome }}; task=[$WEIR_TASK_ID]"'
tasks:
  flaky:
    operator: bash
    retries: 1
    retry_delay: 1s
    bash_command: "echo try $WEIR_TRY_NUMBER; exit 1"
    on_execute: 'echo "starting {{ .task_id }} try $WEIR_TRY_NUMBER"'
    on_retry: 'echo "retrying after try {{ .callback.try_number }}"'
    on_failure:
      - 'echo "{{ .task_id }} failed for good, callback $WEIR_CALLBACK_ID ({{ .callback.event }})"'
      - command: 'echo "this one breaks"; exit 3'
`

// callbacksOf waits until run's callbacks are n and all done, and returns
// them in id order.
func (c *client) callbacksOf(dagID, runID string, n int) []core.Callback {
	c.T.Helper()
	var page api.CallbackCollection
	waitFor(c.T, fmt.Sprintf("%d callbacks of %s/%s to finish", n, dagID, runID), func() (bool, string) {
		c.Get(fmt.Sprintf("/api/v2/dags/%s/dagRuns/%s/callbacks?limit=100", dagID, runID), &page)
		done := 0
		for _, cb := range page.Callbacks {
			if cb.State.Terminal() {
				done++
			}
		}
		return page.TotalEntries == n && done == n, fmt.Sprintf("%+v", page.Callbacks)
	})
	return page.Callbacks
}

// callbackLog returns the latest attempt's log of callback id.
func (c *client) callbackLog(dagID, runID string, id int64) string {
	c.T.Helper()
	var chunk api.LogChunk
	c.Get(fmt.Sprintf("/api/v2/dags/%s/dagRuns/%s/callbacks/%d/logs", dagID, runID, id), &chunk)
	return string(chunk.Text())
}

// TestCallbacks runs every callback event of a task and a DAG on both
// engines (docs/emission.md#callbacks): each fires once per state change,
// runs on the worker with its log beside the run's, and a callback that
// fails is recorded as failed without changing the run's outcome.
func TestCallbacks(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		home, dags := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(dags, "cb.yaml"), callbacksDAG)
		s := startStandalone(t, home, dags, env...)
		api := s.api.with(t)
		api.WaitDAG("cb_demo")
		api.Trigger("cb_demo", "r1", nil)
		if run := api.WaitRunDone("cb_demo", "r1"); run.State != core.RunFailed {
			t.Fatalf("run is %s, want failed", run.State)
		}
		cbs := api.callbacksOf("cb_demo", "r1", 6)
		var got []string
		for _, cb := range cbs {
			got = append(got, fmt.Sprintf("%s %s try %d #%d: %s", cb.TaskID, cb.Event, cb.TryNumber, cb.SpecIndex, cb.State))
		}
		slices.Sort(got)
		want := []string{
			" on_failure try 0 #0: success",
			"flaky on_execute try 1 #0: success",
			"flaky on_execute try 2 #0: success",
			"flaky on_failure try 2 #0: success",
			"flaky on_failure try 2 #1: failed",
			"flaky on_retry try 1 #0: success",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("callbacks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, cb := range cbs {
			log := api.callbackLog("cb_demo", "r1", cb.ID)
			var wantLog string
			switch {
			case cb.TaskID == "":
				wantLog = "run r1 of cb_demo ended failed; task=[]"
			case cb.Event == core.OnFailure && cb.SpecIndex == 0:
				wantLog = "flaky failed for good, callback " + strconv.FormatInt(cb.ID, 10) + " (on_failure)"
			case cb.Event == core.OnFailure:
				wantLog = "this one breaks"
				if !strings.Contains(cb.Error, "exit code 3") {
					t.Errorf("the failing callback's error is %q, want its exit code", cb.Error)
				}
			case cb.Event == core.OnRetry:
				wantLog = "retrying after try 1"
			default:
				wantLog = fmt.Sprintf("starting flaky try %d", cb.TryNumber)
			}
			if !strings.Contains(log, wantLog) {
				t.Errorf("callback %d (%s %s) log lacks %q:\n%s", cb.ID, cb.TaskID, cb.Event, wantLog, log)
			}
		}
		if run := api.WaitRunDone("cb_demo", "r1"); run.State != core.RunFailed {
			t.Errorf("after its callbacks the run is %s, want failed still", run.State)
		}
		r := runWeir(t, env, "runs", "callbacks", "cb_demo", "r1", "--home", home)
		if r.Code != 0 || !strings.Contains(r.Stdout, "on_retry") || !strings.Contains(r.Stdout, "exit code 3") {
			t.Errorf("weir runs callbacks: %s; want the run's callbacks with their errors", r)
		}
	})
}

// slowCallbackDAG's task fails at once; its failure callback logs a line,
// writes its pid and sleeps on its first attempt, and finishes at once on
// the next.
func slowCallbackDAG(pidFile string) string {
	return fmt.Sprintf(`dag_id: cb_crash
schedule: null
tasks:
  boom:
    operator: bash
    bash_command: exit 1
    on_failure: |
      if [ "$WEIR_CALLBACK_ATTEMPT" = 1 ]; then echo "attempt 1 sleeps"; echo $$ > %q; exec sleep 300; fi
      echo "attempt $WEIR_CALLBACK_ATTEMPT done"
`, pidFile)
}

// TestCallbackSurvivesWorkerCrash SIGKILLs the worker running a callback,
// whose log shows what it wrote so far: the scheduler finds its heartbeat
// missing and queues the callback again, and the other worker runs it
// (callbacks run at least once).
func TestCallbackSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, dags := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "callback.pid")
	writeFile(t, filepath.Join(dags, "cb_crash.yaml"), slowCallbackDAG(pidFile))
	port := weirtest.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{"WEIR__DATABASE__CONN=" + dsn, "WEIR__API__PORT=" + strconv.Itoa(port),
		"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=6s"}
	workers, api := startWorkerPair(t, env, base, home, dags)

	api.WaitDAG("cb_crash")
	api.Trigger("cb_crash", "crash", nil)
	api.WaitRunDone("cb_crash", "crash")
	callbackPID := waitPIDFile(t, pidFile)
	var page struct {
		Callbacks []core.Callback `json:"callbacks"`
	}
	api.Get("/api/v2/dags/cb_crash/dagRuns/crash/callbacks", &page)
	if len(page.Callbacks) != 1 || page.Callbacks[0].State != core.CallbackRunning {
		t.Fatalf("callbacks %+v, want the one failure callback running", page.Callbacks)
	}
	// The running attempt's log is shipped as it is written, as a try's.
	waitFor(t, "the running callback's first line in its log", func() (bool, string) {
		log := api.callbackLog("cb_crash", "crash", page.Callbacks[0].ID)
		return strings.Contains(log, "attempt 1 sleeps"), log
	})
	first := page.Callbacks[0].WorkerID
	victim, ok := workers[first]
	if !ok {
		t.Fatalf("the callback runs on worker %q, want w1 or w2", first)
	}
	victim.Signal(t, syscall.SIGKILL)
	waitFor(t, "the callback's command to die with its worker", func() (bool, string) { return processGone(callbackPID), "" })

	cbs := api.callbacksOf("cb_crash", "crash", 1)
	if cb := cbs[0]; cb.State != core.CallbackSuccess || cb.Attempts != 2 || cb.WorkerID == first {
		t.Fatalf("callback after the crash: %+v, want success in attempt 2 on the other worker", cb)
	}
	if log := api.callbackLog("cb_crash", "crash", cbs[0].ID); !strings.Contains(log, "attempt 2 done") {
		t.Errorf("attempt 2's log lacks its output:\n%s", log)
	}
}
