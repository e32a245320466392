package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// `weir dags test` runs the callbacks its run fires, the DAG's own at the
// run's end included, as Airflow's dag.test() runs a DAG's callbacks, and
// prints their logs and outcome before it exits; the run is then no
// test's (ADR 0042). They used to be left queued for whichever deployment
// later started in the home.
func TestDagsTestRunsTheCallbacksItsRunFires(t *testing.T) {
	t.Parallel()
	fired := filepath.Join(t.TempDir(), "fired")
	h := newTestHome(t, map[string]string{"cb": "on_success: 'echo run of {{ dag_id }} >> " + fired + "'\n" +
		"default_args:\n  on_success: 'echo task {{ task_id }} >> " + fired + " && echo said so'\n"})
	if err := os.Remove(fired); err != nil { // the home's first test ran them too
		t.Fatal(err)
	}

	code, out, errOut := h.run(t.Context(), "dags", "test", "cb")
	if code != 0 {
		t.Fatalf("dags test cb: exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(fired)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(lines) // the two run at once
	if err != nil || !slices.Equal(lines, []string{"run of cb", "task t"}) {
		t.Errorf("what the callbacks wrote: %q, %v; want the task's and the run's lines", b, err)
	}
	for _, want := range []string{"t on_success | said so\n", "(dag) on_success | [", "weir: callback succeeded\n",
		"CALLBACK_OF  EVENT       STATE    ATTEMPTS  ERROR\nt            on_success  success  1", "(dag)        on_success  success  1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the test's output lacks %q:\n%s", want, out)
		}
	}
	st := h.open()
	defer st.Close()
	runs, err := st.DagRunList(t.Context(), &store.DagRunListParams{DagID: "cb"})
	if err != nil || len(runs) != 2 {
		t.Fatalf("cb's runs: %v, %v; want the two tests'", runs, err)
	}
	for _, r := range runs {
		if r.TestJobID != "" {
			t.Errorf("run %s after its test: TestJobID %q, want none", r.RunID, r.TestJobID)
		}
		cbs, err := st.CallbackList(t.Context(), &store.CallbackListParams{DagRunID: r.ID})
		if err != nil || len(cbs) != 2 || cbs[0].State != core.CallbackSuccess || cbs[1].State != core.CallbackSuccess {
			t.Errorf("run %s's callbacks: %+v, %v; want the task's and the run's, both run", r.RunID, cbs, err)
		}
	}
}

// A test stopped (Ctrl-C) while a callback its run fired runs stops it
// and fails it: no deployment runs a test's callbacks later.
func TestDagsTestStoppedDuringACallbackFailsIt(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	st, run, done := testWaitingOnACallback(ctx, t)
	stop()
	res := done()
	if res.code == 0 || !strings.Contains(res.err, "ended success; the callbacks it fired did not") {
		t.Errorf("the stopped test: exit %d, stderr:\n%s\nwant 1, saying the callbacks did not end", res.code, res.err)
	}
	cbs, err := st.CallbackList(t.Context(), &store.CallbackListParams{DagRunID: run.ID})
	if err != nil || len(cbs) != 1 || cbs[0].State != core.CallbackFailed || cbs[0].Error == "" {
		t.Errorf("the callback the test was running: %+v, %v; want it failed, saying why", cbs, err)
	}
	if r, err := st.DagRunGetByID(t.Context(), run.ID); err != nil || r.State != core.RunSuccess || r.TestJobID != "" {
		t.Errorf("the stopped test's run: %+v, %v; want success, no test's", r, err)
	}
}

// testResult is how a `weir dags test` ended.
type testResult struct {
	code     int
	out, err string
}

// testWaitingOnACallback starts `weir dags test cb` (with ctx), whose run's
// end fires a callback that logs a line and sleeps a minute, and returns
// once that callback runs and the test has printed its line (a running
// callback's log is streamed, as a try's): the home's store (closed with
// the test), the run, and a function that waits (up to 30 s) for the test
// to end.
func testWaitingOnACallback(ctx context.Context, t *testing.T) (*sqlstore.Store, core.DagRun, func() testResult) {
	t.Helper()
	slow := filepath.Join(t.TempDir(), "slow")
	h := newTestHome(t, map[string]string{"cb": "on_success: 'echo callback begins; if test -e " + slow + "; then sleep 60; fi'\n"})
	if err := os.WriteFile(slow, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st := h.open()
	t.Cleanup(func() { _ = st.Close() })
	done := make(chan testResult, 1)
	var out, errOut syncbuf.Buffer
	go func() {
		code := h.runTo(ctx, &out, &errOut, "dags", "test", "cb")
		done <- testResult{code, out.String(), errOut.String()}
	}()
	var run core.DagRun
	wait.Until(t, 30*time.Second, "the run's callback to run", func() bool {
		rs, err := st.DagRunList(t.Context(), &store.DagRunListParams{DagID: "cb", Tests: true})
		if err != nil || len(rs) != 1 {
			return false
		}
		run = rs[0]
		n, err := st.CallbackCount(t.Context(), &store.CallbackListParams{DagRunID: run.ID, States: []core.CallbackState{core.CallbackRunning}})
		return err == nil && n == 1
	})
	wait.Until(t, 30*time.Second, "the running callback's line in the test's output", func() bool {
		return strings.Contains(out.String(), "(dag) on_success | callback begins\n")
	})
	return st, run, func() testResult {
		t.Helper()
		select {
		case res := <-done:
			return res
		case <-time.After(30 * time.Second):
			t.Fatal("the test did not exit")
			return testResult{}
		}
	}
}

// `weir tasks test` runs one task's callbacks but none of the DAG's own:
// its run tests one task, as `airflow tasks test` ends no run (a one-task
// test would have sent the DAG's "nightly succeeded" alert).
func TestTasksTestFiresNoDagCallbacks(t *testing.T) {
	t.Parallel()
	fired := filepath.Join(t.TempDir(), "fired")
	h := newTestHome(t, map[string]string{"cb": "on_success: 'echo run >> " + fired + "'\n" +
		"default_args:\n  on_success: 'echo task >> " + fired + "'\n"})
	if err := os.Remove(fired); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := h.run(t.Context(), "tasks", "test", "cb", "t")
	if code != 0 {
		t.Fatalf("tasks test cb t: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(fired); err != nil || string(b) != "task\n" {
		t.Errorf("what the callbacks wrote: %q, %v; want the task's alone", b, err)
	}
	if strings.Contains(out, "(dag)") {
		t.Errorf("a tasks test's output names a DAG callback:\n%s", out)
	}
}

// A run cleared after it ended, while the test waits for its callbacks, is
// the deployment's again (its test_job_id cleared): the test stops saying
// so, and does not fail the run as a stopped test does.
func TestDagsTestStopsWhenItsRunIsCleared(t *testing.T) {
	t.Parallel()
	st, run, done := testWaitingOnACallback(t.Context(), t)
	if _, err := st.DagRunSetState(t.Context(), &store.DagRunSetStateParams{ID: run.ID, To: core.RunQueued, Now: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	res := done()
	if res.code == 0 || !strings.Contains(res.err, "was cleared after it ended: it is the deployment's now") {
		t.Errorf("the test whose run was cleared: exit %d, stderr:\n%s\nwant 1, saying why", res.code, res.err)
	}
	// Queued again, it may have been run again meanwhile (its instances
	// were left as they were): never failed by the test as it stopped.
	if r, err := st.DagRunGetByID(t.Context(), run.ID); err != nil || r.State == core.RunFailed || r.TestJobID != "" {
		t.Errorf("the cleared run after its test: %+v, %v; want it not failed, no test's", r, err)
	}
}
