package ui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// A callback's page (issue 9): the run page's Callbacks panel links each
// callback that ran to its page, which shows the chosen attempt's log
// (the latest by default) beside the log of the try it was fired for (a
// task's callback) or the run's task instances (the run's callback); an
// unknown callback, one of another run and an attempt that never ran are
// refused with a message naming them.
func TestCallbackLogPage(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		ctx := t.Context()
		e := newEnv(t, st)
		r := e.run("r1", core.TIFailed, core.TIUpstreamFailed)
		e.run("r2", core.TISuccess, core.TISuccess)
		e.writeLog(1, "extract try 1: connection refused\n")
		task := core.Callback{Level: core.CallbackTask, Event: core.OnFailure, DagID: "etl", RunID: "r1", DagRunID: r.ID,
			TaskID: "extract", MapIndex: core.NoMapIndex, TryNumber: 1, Spec: core.CallbackSpec{Command: "notify-oncall"}, Outcome: "failed"}
		dag := core.Callback{Level: core.CallbackDag, Event: core.OnFailure, DagID: "etl", RunID: "r1", DagRunID: r.ID,
			MapIndex: core.NoMapIndex, Spec: core.CallbackSpec{Notifier: core.NotifierWebhook, ConnID: "ops"}, Outcome: "failed"}
		if err := st.CallbackInsert(ctx, []core.Callback{task, dag}, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
		claimed, err := st.CallbackClaim(ctx, &store.CallbackClaimParams{WorkerID: "w1", Limit: 2, Now: e.clk.Now()})
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim: %v %d", err, len(claimed))
		}
		ids := map[core.CallbackLevel]int64{}
		for _, cb := range claimed {
			ids[cb.Level] = cb.ID
			if err := tasklog.Append(e.logs, tasklog.CallbackKey(&cb, 1), []byte(fmt.Sprintf("callback %s attempt 1 ran\n", cb.Level))); err != nil {
				t.Fatal(err)
			}
		}
		v := e.loggedIn(core.RoleViewer)
		run := v.get("/dags/etl/runs/r1")
		for _, id := range ids {
			if want := fmt.Sprintf(`href="/dags/etl/runs/r1/callbacks/%d"`, id); !strings.Contains(run.body, want) {
				t.Errorf("the run page does not link callback %d's page (%s)", id, want)
			}
		}

		page := v.get(fmt.Sprintf("/dags/etl/runs/r1/callbacks/%d", ids[core.CallbackTask]))
		for _, want := range []string{"Log of attempt 1", "callback task attempt 1 ran", "extract try 1: connection refused",
			`href="/dags/etl/runs/r1/tasks/extract?try=1"`, "notify-oncall"} {
			if page.status != http.StatusOK || !strings.Contains(page.body, want) {
				t.Errorf("task callback's page (%d) lacks %q:\n%s", page.status, want, page.body)
			}
		}
		// A running attempt's log is tailed from where the page's copy ends
		// (the REST API's route, as a running try's); an ended one's is not.
		taskLine := fmt.Sprintf("callback %s attempt 1 ran\n", core.CallbackTask)
		tail := fmt.Sprintf(`data-tail="/api/v2/dags/etl/dagRuns/r1/callbacks/%d/logs?attempt=1&amp;token=%d"`, ids[core.CallbackTask], len(taskLine))
		if !strings.Contains(page.body, tail) || !strings.Contains(page.body, "(live)") {
			t.Errorf("the running callback's page does not tail its log (%s):\n%s", tail, page.body)
		}
		if err := st.CallbackFinish(ctx, &store.CallbackFinishParams{ID: ids[core.CallbackTask], Attempt: 1,
			State: core.CallbackSuccess, Now: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		if page := v.get(fmt.Sprintf("/dags/etl/runs/r1/callbacks/%d", ids[core.CallbackTask])); strings.Contains(page.body, "data-tail") ||
			strings.Contains(page.body, "(live)") || !strings.Contains(page.body, "callback task attempt 1 ran") {
			t.Errorf("the ended callback's page still tails its log, or lost it:\n%s", page.body)
		}

		page = v.get(fmt.Sprintf("/dags/etl/runs/r1/callbacks/%d", ids[core.CallbackDag]))
		for _, want := range []string{"callback dag attempt 1 ran", `id="run-tasks"`, `aria-label="Log of extract"`,
			`aria-label="Log of load"`, "notifier <code>webhook</code>"} {
			if page.status != http.StatusOK || !strings.Contains(page.body, want) {
				t.Errorf("run callback's page (%d) lacks %q:\n%s", page.status, want, page.body)
			}
		}
		if strings.Contains(page.body, "extract try 1: connection refused") {
			t.Error("the run callback's page shows a try's log instead of the run's tasks")
		}

		for _, tc := range []struct {
			path   string
			status int
			want   string
		}{
			{fmt.Sprintf("/dags/etl/runs/r2/callbacks/%d", ids[core.CallbackTask]), http.StatusNotFound, "is not one of run"},
			{"/dags/etl/runs/r1/callbacks/99999", http.StatusNotFound, "99999"},
			{"/dags/etl/runs/r1/callbacks/abc", http.StatusBadRequest, "callback id must be a callback"},
			{fmt.Sprintf("/dags/etl/runs/r1/callbacks/%d?attempt=2", ids[core.CallbackTask]), http.StatusBadRequest, "1 to 1"},
		} {
			if got := v.get(tc.path); got.status != tc.status || !strings.Contains(got.body, tc.want) {
				t.Errorf("GET %s: %d, want %d with %q:\n%s", tc.path, got.status, tc.status, tc.want, got.body)
			}
		}
	})
}
