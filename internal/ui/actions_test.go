package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// An op marks a whole run from its page: failed fails the running task and
// skips the unfinished one, audited as dag_run.mark; a viewer sees no mark
// form and is refused if it posts anyway.
func TestRunPageMarkRun(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TIRunning, core.TINone)
		viewer := e.loggedIn(core.RoleViewer)
		vpage := viewer.get("/dags/etl/runs/r1")
		if strings.Contains(vpage.body, "/runs/r1/mark") {
			t.Fatalf("viewer's run page has the mark form:\n%s", vpage.body)
		}
		if r := viewer.post("/dags/etl/runs/r1/mark", url.Values{"csrf": {csrfOf(t, vpage.body)}, "state": {"success"}}); r.status != http.StatusForbidden {
			t.Errorf("viewer mark: %d, want 403", r.status)
		}

		op := e.loggedIn(core.RoleOp)
		page := op.get("/dags/etl/runs/r1")
		if !strings.Contains(page.body, `aria-label="Mark run r1 failed"`) {
			t.Fatalf("op's run page has no mark buttons:\n%s", page.body)
		}
		csrf := csrfOf(t, page.body)
		if r := op.post("/dags/etl/runs/r1/mark", url.Values{"csrf": {csrf}, "state": {"queued"}}); r.status != http.StatusBadRequest ||
			!strings.Contains(r.body, "allowed: success, failed") {
			t.Errorf("mark queued: %d, want 400 naming the allowed states:\n%s", r.status, r.body)
		}
		r := op.post("/dags/etl/runs/r1/mark", url.Values{"csrf": {csrf}, "state": {"failed"}, "back": {"/dags/etl/runs/r1"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dags/etl/runs/r1" {
			t.Fatalf("mark failed: %d to %q\n%s", r.status, r.header.Get("Location"), r.body)
		}
		run, _ := st.DagRunGet(t.Context(), "etl", "r1")
		extract, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "extract", core.NoMapIndex)
		load, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "load", core.NoMapIndex)
		if run.State != core.RunFailed || extract.State != core.TIFailed || load.State != core.TISkipped {
			t.Errorf("after mark failed: run %s, extract %s, load %s; want failed, failed, skipped", run.State, extract.State, load.State)
		}
		audit, _ := st.AuditLogList(t.Context(), &store.AuditLogListParams{Action: "dag_run.mark"})
		if len(audit) != 1 || audit[0].User != "op" || audit[0].Target != "etl/r1" || !strings.Contains(audit[0].Detail, "new_state=failed") {
			t.Errorf("audit = %+v, want one dag_run.mark of etl/r1 by op", audit)
		}
	})
}

// The DAG page's action form marks or clears a run, or one task in it,
// chosen from the grid's runs and tasks; a viewer has no such form and is
// refused; a bad action changes nothing.
func TestGridActions(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TISuccess, core.TIFailed)
		e.run("r2", core.TIRunning, core.TINone)
		viewer := e.loggedIn(core.RoleViewer)
		vpage := viewer.get("/dags/etl")
		if strings.Contains(vpage.body, "/dags/etl/actions") {
			t.Fatal("viewer's DAG page has the grid action form")
		}
		if r := viewer.post("/dags/etl/actions", url.Values{"csrf": {csrfOf(t, vpage.body)}, "run_id": {"r1"}, "action": {"clear"}}); r.status != http.StatusForbidden {
			t.Errorf("viewer grid action: %d, want 403", r.status)
		}

		op := e.loggedIn(core.RoleOp)
		page := op.get("/dags/etl")
		if !strings.Contains(page.body, `<select name="run_id"><option>r2</option><option>r1</option></select>`) ||
			!strings.Contains(page.body, `<option>load</option>`) {
			t.Fatalf("op's DAG page has no action form with the grid's runs (newest first) and tasks:\n%s", page.body)
		}
		csrf := csrfOf(t, page.body)
		post := func(v url.Values) response {
			v.Set("csrf", csrf)
			return op.post("/dags/etl/actions", v)
		}
		if r := post(url.Values{"run_id": {"r1"}, "action": {"delete"}}); r.status != http.StatusBadRequest || !strings.Contains(r.body, "mark_success") {
			t.Errorf("bad action: %d, want 400 naming the actions:\n%s", r.status, r.body)
		}
		// A task's mark first lists what it changes, with Airflow's options
		// (the grid form's clear options are not the mark's); listed again
		// with later runs, load in r2 joins; confirmed as first listed, only
		// r1's changes.
		mark := url.Values{"run_id": {"r1"}, "task_id": {"load"}, "action": {"mark_success"}, "downstream": {"true"}}
		if r := post(mark); r.status != http.StatusOK || !strings.Contains(r.body, "Mark 1 task instance as success?") ||
			!strings.Contains(r.body, `<input type="checkbox" name="future" value="true">`) || strings.Contains(r.body, `name="downstream" value="true" checked`) {
			t.Fatalf("mark load success, unconfirmed: %d\n%s", r.status, r.body)
		}
		if ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "load", core.NoMapIndex); ti.State != core.TIFailed {
			t.Fatalf("the mark's confirmation page changed load to %s", ti.State)
		}
		if r := post(url.Values{"run_id": {"r1"}, "task_id": {"load"}, "action": {"mark_success"}, "listed": {"yes"}, "future": {"true"}}); r.status != http.StatusOK ||
			!strings.Contains(r.body, "Mark 2 task instances as success?") || !strings.Contains(r.body, "<td>r2</td>") {
			t.Fatalf("mark load success with later runs, unconfirmed: %d\n%s", r.status, r.body)
		}
		if r := post(url.Values{"run_id": {"r1"}, "task_id": {"load"}, "action": {"mark_success"}, "listed": {"yes"}, "confirm": {"yes"}}); r.status != http.StatusSeeOther ||
			r.header.Get("Location") != "/dags/etl" {
			t.Fatalf("mark load success: %d to %q\n%s", r.status, r.header.Get("Location"), r.body)
		}
		if ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r2", "load", core.NoMapIndex); ti.State != core.TINone {
			t.Errorf("load in r2 after a mark of r1's alone = %s", ti.State)
		}
		if ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "load", core.NoMapIndex); ti.State != core.TISuccess {
			t.Errorf("load in r1 after mark success from the grid = %s", ti.State)
		}
		if r := post(url.Values{"run_id": {"r2"}, "action": {"mark_success"}}); r.status != http.StatusSeeOther {
			t.Fatalf("mark r2 success: %d\n%s", r.status, r.body)
		}
		if run, _ := st.DagRunGet(t.Context(), "etl", "r2"); run.State != core.RunSuccess {
			t.Errorf("r2 after mark success from the grid = %s", run.State)
		}
		// With its downstream tasks (the form's default), a task's clear
		// would reset load too; the page lists both and changes nothing.
		if r := post(url.Values{"run_id": {"r1"}, "task_id": {"extract"}, "action": {"clear"}, "downstream": {"true"}}); r.status != http.StatusOK ||
			!strings.Contains(r.body, "Clear 2 task instances?") || !strings.Contains(r.body, "<th scope=\"row\">load</th>") {
			t.Fatalf("clear extract and downstream, unconfirmed: %d\n%s", r.status, r.body)
		}
		if r := post(url.Values{"run_id": {"r1"}, "task_id": {"extract"}, "action": {"clear"}, "keep_task_state": {"true"}, "confirm": {"yes"}}); r.status != http.StatusSeeOther {
			t.Fatalf("clear extract: %d\n%s", r.status, r.body)
		}
		if ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "extract", core.NoMapIndex); ti.State != core.TINone || ti.TryNumber != 2 {
			t.Errorf("extract in r1 after clear from the grid: %s try %d, want none and try 2", ti.State, ti.TryNumber)
		}
		if load, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "load", core.NoMapIndex); load.State != core.TISuccess {
			t.Errorf("clearing extract changed load to %s", load.State)
		}
		for _, action := range []string{"task_instance.mark", "dag_run.mark", "task_instance.clear"} {
			if a, _ := st.AuditLogList(t.Context(), &store.AuditLogListParams{Action: action}); len(a) != 1 || a[0].User != "op" {
				t.Errorf("audit %s = %+v, want one by op", action, a)
			}
		}
	})
}
