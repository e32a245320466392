package externaltask_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/externaltask"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// TestTaskReachesSuccess: a task instance that does not exist yet is
// logged and polled again; once it exists and succeeds, the event names it
// and its state.
func TestTaskReachesSuccess(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	tr := triggertest.New(t, externaltask.Type, `{"dag_id":"up","run_id":"r1","task_id":"load","poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Runs: st})
	wait.Until(t, triggertest.Bound, "the missing task to be logged", func() bool { return strings.Contains(run.Log(), "does not exist (yet)") })
	createRun(t, st, "r1")
	setTask(t, st, "r1", core.TIRunning)
	setTask(t, st, "r1", core.TISuccess)
	if got := string(run.Event(t)); got != `{"dag_id":"up","run_id":"r1","task_id":"load","map_index":-1,"state":"success"}` {
		t.Errorf("event = %s, want the task and state success", got)
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("after its event the trigger returned %v", err)
	}
}

// TestRunFailureEndsTheTrigger: a watched run that fails ends the trigger
// with an error naming the state.
func TestRunFailureEndsTheTrigger(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	id := createRun(t, st, "r1")
	tr := triggertest.New(t, externaltask.Type, `{"dag_id":"up","run_id":"r1","poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Runs: st})
	if _, err := st.DagRunSetState(t.Context(), &store.DagRunSetStateParams{ID: id, To: core.RunFailed, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	err := run.Wait(t)
	if err == nil || !strings.Contains(err.Error(), `run "r1" of DAG "up" reached state "failed"`) {
		t.Errorf("Run = %v, want an error naming the failed run", err)
	}
}

func TestCancelStopsAPollingTrigger(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	createRun(t, st, "r1")
	run := triggertest.Start(t, triggertest.New(t, externaltask.Type, `{"dag_id":"up","run_id":"r1"}`), &trigger.Runtime{Runs: st})
	run.Cancel(t)
}

// createRun creates run runID of DAG "up" (task "load"), running.
func createRun(t *testing.T, st *sqlstore.Store, runID string) int64 {
	t.Helper()
	ctx := context.Background()
	dag := core.DAG{DagID: "up", Tasks: []core.Task{{TaskID: "load", Operator: "noop"}}}
	vid, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: "h1", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "up", RunID: runID, RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: vid, Now: time.Now(), TaskInstances: []store.NewTaskInstance{
			{ID: uuid.NewString(), TaskID: "load", MapIndex: -1, MaxTries: 1, Operator: "noop", State: core.TIScheduled, PriorityWeight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func setTask(t *testing.T, st *sqlstore.Store, runID string, to core.TIState) {
	t.Helper()
	ti, err := st.TaskInstanceGetByKey(t.Context(), "up", runID, "load", -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.TaskInstanceSetState(t.Context(), &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: to, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
}
