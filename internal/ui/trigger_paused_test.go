package ui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The trigger form of a paused DAG offers "unpause on trigger", checked at
// first, as Airflow's trigger dialog does (new DAGs start paused by
// default): checked, the DAG is unpaused with the run; unchecked, the run
// is created and the DAG stays paused; a refused trigger unpauses nothing.
// An unpaused DAG's form has no such box.
func TestTriggerFormUnpausesOnTrigger(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		for id, paused := range map[string]bool{"held": true, "free": false} {
			d := core.DAG{DagID: id, Params: map[string]any{"times": float64(1)}, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
			b, _ := json.Marshal(d)
			if _, _, err := st.DagSync(t.Context(), &store.DagSyncParams{Spec: d, Hash: string(b), Now: e.clk.Now(), Paused: paused}); err != nil {
				t.Fatal(err)
			}
		}
		op := e.loggedIn(core.RoleOp)
		box := `name="unpause" value="true" checked`
		form := op.get("/dags/held/trigger")
		if !strings.Contains(form.body, box) || !strings.Contains(form.body, "held is paused: unchecked, the run stays queued") {
			t.Errorf("paused DAG's trigger form lacks a checked unpause box saying what unchecked means:\n%s", form.body)
		}
		if free := op.get("/dags/free/trigger"); strings.Contains(free.body, `name="unpause"`) {
			t.Errorf("unpaused DAG's trigger form offers to unpause it")
		}
		csrf := csrfOf(t, form.body)
		isPaused := func() bool {
			t.Helper()
			d, err := st.DagGet(t.Context(), "held")
			if err != nil {
				t.Fatal(err)
			}
			return d.IsPaused
		}

		bad := op.post("/dags/held/trigger", url.Values{"csrf": {csrf}, "param.times": {"twice"}, "unpause": {"true"}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.body, box) || !isPaused() {
			t.Errorf("refused trigger with unpause: %d, paused %v; want 400, the box kept checked and the DAG still paused", bad.status, isPaused())
		}
		if r := op.post("/dags/held/trigger", url.Values{"csrf": {csrf}, "param.times": {"2"}, "run_id": {"kept_paused"}}); r.status != http.StatusSeeOther || !isPaused() {
			t.Errorf("trigger with the box unchecked: %d, paused %v; want 303 and the DAG still paused", r.status, isPaused())
		}
		if run, err := st.DagRunGet(t.Context(), "held", "kept_paused"); err != nil || run.State != core.RunQueued {
			t.Errorf("run triggered on the paused DAG: %+v, %v; want it queued", run, err)
		}
		if r := op.post("/dags/held/trigger", url.Values{"csrf": {csrf}, "param.times": {"3"}, "run_id": {"unpaused"}, "unpause": {"true"}}); r.status != http.StatusSeeOther || isPaused() {
			t.Errorf("trigger with unpause checked: %d, paused %v; want 303 and the DAG unpaused", r.status, isPaused())
		}
		if _, err := st.DagRunGet(t.Context(), "held", "unpaused"); err != nil {
			t.Errorf("run of the trigger that unpaused: %v", err)
		}
	})
}
