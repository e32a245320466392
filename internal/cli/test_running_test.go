package cli_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// `weir dags test` runs at once, as Airflow's dag.test() does, even when
// the DAG's max_active_runs are all taken: its run is created running,
// not queued behind them. Here the DAG's only slot is held by a run whose
// task waits an hour for its retry.
func TestDagsTestRunsBesideMaxActiveRuns(t *testing.T) {
	t.Parallel()
	h := newTestHome(t, map[string]string{"single": "max_active_runs: 1\nis_paused_upon_creation: false\n"})
	st, ctx, now := h.open(), t.Context(), time.Now().UTC()
	v, err := st.DagVersionLatest(ctx, "single")
	if err != nil {
		t.Fatal(err)
	}
	tiID := uuid.NewString()
	blocker, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "single", RunID: "blocker", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: v.ID, Now: now, TaskInstances: []store.NewTaskInstance{{ID: tiID,
			TaskID: "t", MapIndex: -1, MaxTries: 2, Operator: "bash", Queue: core.DefaultQueue, Pool: core.DefaultPool}}})
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{tiID}, To: core.TIUpForRetry,
		Now: now, NextRetryAt: &later}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	limited, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code, out, errOut := h.run(limited, "dags", "test", "single")
	if code != 0 || !strings.Contains(out, "t | single\n") || !strings.Contains(out, "of single: success") {
		t.Fatalf("dags test beside a run holding max_active_runs: exit %d, want its task run and its run a success\nstdout:\n%s\nstderr:\n%s",
			code, out, errOut)
	}
	st = h.open()
	defer st.Close()
	if r, err := st.DagRunGetByID(ctx, blocker.ID); err != nil || r.State != core.RunRunning {
		t.Errorf("the run holding the slot: %v, %v; want it still running, left alone", r, err)
	}
	// The test's roles were no deployment's: their job rows went with it.
	if jobs, err := st.JobList(ctx); err != nil || len(jobs) != 0 {
		t.Errorf("job rows after the tests: %+v, %v; want none", jobs, err)
	}
}

// `weir dags test` in a home a deployment shares runs its own run's work
// alone: another DAG's try queued for the deployment's workers, the
// trigger another try waits on and a fired callback are left to the
// deployment's workers and triggerer, and so is the deployment's
// housekeeping: a trigger no try waits on any more, a backfill whose runs
// have all ended.
func TestDagsTestLeavesTheDeploymentsTriesAlone(t *testing.T) {
	t.Parallel()
	h := newTestHome(t, map[string]string{"tested": "", "other": ""})
	st, ctx, now := h.open(), t.Context(), time.Now().UTC()
	v, err := st.DagVersionLatest(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	theirs, waiting, resumed := uuid.NewString(), uuid.NewString(), uuid.NewString()
	r, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "other", RunID: "deployment", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: v.ID, Now: now, TaskInstances: []store.NewTaskInstance{
			{ID: theirs, TaskID: "t", MapIndex: -1, MaxTries: 1, Operator: "bash", Queue: core.DefaultQueue, Pool: core.DefaultPool, State: core.TIQueued},
			{ID: waiting, TaskID: "w", MapIndex: -1, MaxTries: 1, Operator: "bash", Queue: core.DefaultQueue, Pool: core.DefaultPool, State: core.TIRunning},
			{ID: resumed, TaskID: "r", MapIndex: -1, MaxTries: 1, Operator: "bash", Queue: core.DefaultQueue, Pool: core.DefaultPool, State: core.TIRunning}}})
	if err != nil {
		t.Fatal(err)
	}
	deferTo := func(id string) int64 {
		tid, err := st.TaskInstanceDefer(ctx, &store.TaskInstanceDeferParams{ID: id, From: []core.TIState{core.TIRunning},
			Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: []byte(`{"delta":"1h"}`)}, NextMethod: "done", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return tid
	}
	trigger, unused := deferTo(waiting), deferTo(resumed)
	if _, err := st.TaskInstanceResume(ctx, &store.TaskInstanceResumeParams{IDs: []string{resumed}, Fail: "timed out", Now: now}); err != nil {
		t.Fatal(err)
	}
	err = st.CallbackInsert(ctx, []core.Callback{{Level: core.CallbackDag, Event: core.OnFailure, DagID: r.DagID, RunID: r.RunID,
		DagRunID: r.ID, MapIndex: core.NoMapIndex, Spec: core.CallbackSpec{Command: "echo theirs"}, Outcome: "failed"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	backfill, err := st.BackfillCreate(ctx, &store.BackfillCreateParams{DagID: "other", FromDate: now.Add(-48 * time.Hour),
		ToDate: now.Add(-24 * time.Hour), ReprocessBehavior: core.ReprocessNone, MaxActiveRuns: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	if code, out, errOut := h.run(t.Context(), "dags", "test", "tested"); code != 0 {
		t.Fatalf("dags test tested: exit %d\n%s\n%s", code, out, errOut)
	}
	st = h.open()
	defer st.Close()
	ti, err := st.TaskInstanceGet(ctx, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if ti.State != core.TIQueued || ti.WorkerID != "" {
		t.Errorf("the deployment's queued try after a dags test of another DAG: %s, claimed by %q; want queued, unclaimed", ti.State, ti.WorkerID)
	}
	if tr, err := st.TriggerGet(ctx, trigger); err != nil || tr.TriggererID != "" {
		t.Errorf("the trigger the deployment's try waits on after a dags test of another DAG: %+v, %v; want it unassigned", tr, err)
	}
	cbs, err := st.CallbackList(ctx, &store.CallbackListParams{DagRunID: r.ID})
	if err != nil || len(cbs) != 1 || cbs[0].State != core.CallbackQueued {
		t.Errorf("the deployment's callback after a dags test of another DAG: %+v, %v; want it queued", cbs, err)
	}
	if _, err := st.TriggerGet(ctx, unused); err != nil {
		t.Errorf("the trigger no try waits on after a dags test: %v; want it left to the deployment's triggerer", err)
	}
	if b, err := st.BackfillGet(ctx, backfill.ID); err != nil || b.CompletedAt != nil {
		t.Errorf("the backfill without unfinished runs after a dags test: %+v, %v; want it left to the deployment's scheduler", b, err)
	}
}

// testHome is a home and a DAG folder whose DAGs (one bash task t each,
// echoing its DAG's id) a first `weir dags test` of each recorded.
type testHome struct {
	t          *testing.T
	home, dags string
}

// newTestHome writes a DAG for each id of heads (the keys the file has
// before its tasks) and tests each once.
func newTestHome(t *testing.T, heads map[string]string) *testHome {
	t.Helper()
	h := &testHome{t: t, home: t.TempDir(), dags: t.TempDir()}
	for id, head := range heads {
		dag := "dag_id: " + id + "\nschedule: null\n" + head + "tasks:\n  - task_id: t\n    operator: bash\n    bash_command: echo " + id + "\n"
		if err := os.WriteFile(filepath.Join(h.dags, id+".yaml"), []byte(dag), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := h.run(t.Context(), "dags", "test", id); code != 0 {
			t.Fatalf("dags test %s: exit %d\n%s\n%s", id, code, out, errOut)
		}
	}
	return h
}

// run runs weir in the home.
func (h *testHome) run(ctx context.Context, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := h.runTo(ctx, &out, &errOut, args...)
	return code, out.String(), errOut.String()
}

// runTo runs weir in the home with its output to out and errOut.
func (h *testHome) runTo(ctx context.Context, out, errOut io.Writer, args ...string) int {
	return cli.Run(ctx, append(args, "--dags", h.dags), cli.Options{Stdout: out, Stderr: errOut,
		Environ: []string{"WEIR_HOME=" + h.home, "USER=tester"}})
}

// open opens the home's database; the caller closes it.
func (h *testHome) open() *sqlstore.Store {
	h.t.Helper()
	st, err := sqlite.Open(h.t.Context(), filepath.Join(h.home, "weir.db"), sqlite.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}
