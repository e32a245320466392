package ui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// run creates a run of etl with its two instances in the given states and
// a mapped task "fan" with the given states per map index.
func (e *env) run(runID string, extract, load core.TIState, fan ...core.TIState) *core.DagRun {
	e.t.Helper()
	tis := []store.NewTaskInstance{
		{ID: uuid.NewString(), TaskID: "extract", MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "noop", State: extract},
		{ID: uuid.NewString(), TaskID: "load", MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "noop", State: load},
	}
	for i, s := range fan {
		tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: "fan", MapIndex: i, MaxTries: 1, Operator: "noop", State: s})
	}
	r, err := e.st.DagRunCreate(e.t.Context(), &store.DagRunCreateParams{DagID: "etl", RunID: runID, RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: e.dag("etl").LatestVersion, Now: e.clk.Now(), TaskInstances: tis})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// setState moves a task instance of etl to state.
func (e *env) setState(runID, taskID string, state core.TIState) {
	e.t.Helper()
	ti, err := e.st.TaskInstanceGetByKey(e.t.Context(), "etl", runID, taskID, core.NoMapIndex)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.TaskInstanceSetState(e.t.Context(), &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: state, Now: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

var cellRe = regexp.MustCompile(`aria-label="(\w+) in (\w+): ([a-z ]+)(, \d+ mapped)?"`)

// cells lists the grid's cells as "task/run=state[, n mapped]".
func cells(page string) []string {
	var out []string
	for _, m := range cellRe.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1]+"/"+m[2]+"="+m[3]+m[4])
	}
	return out
}

// The DAG page's grid shows runs × tasks (oldest run left) with each
// state, mapped tasks with their count; the grid's fragment answers 304
// while nothing changed and the new state once something did, which is
// what the page's script swaps in without a reload.
func TestDagGridLive(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TISuccess, core.TIFailed, core.TISuccess, core.TIFailed)
		e.run("r2", core.TIRunning, core.TINone)
		b := e.loggedIn(core.RoleViewer)

		page := b.get("/dags/etl")
		if page.status != http.StatusOK {
			t.Fatalf("DAG page: %d\n%s", page.status, page.body)
		}
		want := []string{"extract/r1=success", "extract/r2=running", "load/r1=failed", "load/r2=no status", "fan/r1=failed, 2 mapped"}
		if got := cells(page.body); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("grid cells = %v\nwant %v", got, want)
		}
		etag := regexp.MustCompile(`data-etag="([^"]+)"`).FindStringSubmatch(page.body)
		if etag == nil || !strings.Contains(page.body, `data-live="/dags/etl/grid"`) {
			t.Fatal("grid has no live URL and ETag")
		}
		tag := strings.ReplaceAll(etag[1], "&#34;", `"`)
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/dags/etl/grid", nil)
		req.Header.Set("If-None-Match", tag)
		if r := b.do(req); r.status != http.StatusNotModified {
			t.Fatalf("grid fragment with the page's ETag, nothing changed: %d, want 304", r.status)
		}

		e.setState("r2", "extract", core.TISuccess)
		r := b.do(req)
		if r.status != http.StatusOK || r.header.Get("ETag") == tag || !strings.Contains(r.body, `aria-label="extract in r2: success"`) {
			t.Fatalf("grid fragment after a change: %d, ETag %q (was %q); want 200, a new ETag and the new state:\n%s",
				r.status, r.header.Get("ETag"), tag, r.body)
		}
		if strings.Contains(r.body, "<html") {
			t.Error("grid fragment is a whole page")
		}

		if r := b.get("/dags/etl?runs=1"); !strings.Contains(r.body, "1 newest of 2 runs") || len(cells(r.body)) != 2 {
			t.Errorf("?runs=1 shows %d cells, want the newest run's 2", len(cells(r.body)))
		}
		for _, bad := range []string{"/dags/etl?runs=0", "/dags/etl?runs=101", "/dags/etl/grid?runs=x"} {
			if r := b.get(bad); r.status != http.StatusBadRequest || !strings.Contains(r.body, "runs must be") {
				t.Errorf("GET %s: %d, want 400 naming runs", bad, r.status)
			}
		}
		if r := b.get("/dags/nope"); r.status != http.StatusNotFound || !strings.Contains(r.body, "nope") {
			t.Errorf("unknown DAG: %d, want 404 naming it", r.status)
		}
	})
}

// The trigger form has a field per param, typed by its default and with
// its description; a run starts with the form's values as conf, and a value
// that does not parse creates nothing. A viewer is refused the form.
func TestTriggerForm(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.sync(core.DAG{DagID: "hello", Params: map[string]any{"name": "world", "times": float64(1)},
			ParamDescriptions: map[string]string{"name": "Who to greet."}, Tasks: []core.Task{{TaskID: "greet", Operator: "noop"}}})
		op := e.loggedIn(core.RoleOp)
		form := op.get("/dags/hello/trigger")
		for _, want := range []string{`<label for="param-name">name`, `name="param.name" value="world"`, `Who to greet.`,
			`name="param.times" value="1"`} {
			if !strings.Contains(form.body, want) {
				t.Errorf("trigger form lacks %s", want)
			}
		}
		csrf := csrfOf(t, form.body)
		bad := op.post("/dags/hello/trigger", url.Values{"csrf": {csrf}, "param.name": {"Ana"}, "param.times": {"twice"}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.body, `param &#34;times&#34; must be a number`) ||
			!strings.Contains(bad.body, `value="Ana"`) {
			t.Fatalf("bad number: %d; want 400 naming the param, the form kept:\n%s", bad.status, bad.body)
		}
		if n, _ := st.DagRunCount(t.Context(), &store.DagRunListParams{DagID: "hello"}); n != 0 {
			t.Fatalf("a refused trigger created %d runs", n)
		}
		r := op.post("/dags/hello/trigger", url.Values{"csrf": {csrf}, "param.name": {"Ana"}, "param.times": {"3"}, "run_id": {"from_ui"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dags/hello/runs/from_ui" {
			t.Fatalf("trigger: %d to %q, want 303 to the run", r.status, r.header.Get("Location"))
		}
		run, err := st.DagRunGet(t.Context(), "hello", "from_ui")
		if err != nil || string(run.Conf) != `{"name":"Ana","times":3}` {
			t.Fatalf("triggered run conf = %s, %v", run.Conf, err)
		}
		if page := op.get(r.header.Get("Location")); !strings.Contains(page.body, "&#34;name&#34;: &#34;Ana&#34;") {
			t.Error("run page does not show the conf")
		}
		// Every problem of the form on a line of its own, all at once; the
		// configuration JSON and the logical date kept as typed.
		bad = op.post("/dags/hello/trigger", url.Values{"csrf": {csrf}, "param.name": {"Ana"}, "param.times": {"twice"},
			"conf": {"[1]"}, "logical_date": {"2026-02-30"}, "run_id": {"bad id/with space"}})
		if bad.status != http.StatusBadRequest || strings.Count(bad.body, "<li>") != 4 || strings.Contains(bad.body, "invalid input") ||
			!strings.Contains(bad.body, "the configuration JSON must be a JSON object") || !strings.Contains(bad.body, `>[1]</textarea>`) ||
			!strings.Contains(bad.body, "must not contain") {
			t.Errorf("four bad fields: %d; want each named, one a line:\n%s", bad.status, bad.body)
		}
		// The configuration JSON's keys go over the params', and add others;
		// the logical date is the run's.
		r = op.post("/dags/hello/trigger", url.Values{"csrf": {csrf}, "param.name": {"Ana"}, "param.times": {"3"}, "run_id": {"with_conf"},
			"conf": {`{"times": 5, "extra": true}`}, "logical_date": {"2026-01-02"}})
		run, err = st.DagRunGet(t.Context(), "hello", "with_conf")
		if r.status != http.StatusSeeOther || err != nil || string(run.Conf) != `{"extra":true,"name":"Ana","times":5}` ||
			!run.LogicalDate.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("trigger with conf and a logical date: %d, run %+v, %v", r.status, run, err)
		}

		viewer := e.loggedIn(core.RoleViewer)
		if r := viewer.get("/dags/hello/trigger"); r.status != http.StatusForbidden {
			t.Errorf("viewer GET trigger form: %d, want 403", r.status)
		}
		if strings.Contains(viewer.get("/dags/hello").body, "/trigger") {
			t.Error("viewer's DAG page links the trigger form")
		}
		r = viewer.post("/dags/hello/trigger", url.Values{"csrf": {csrfOf(t, viewer.get("/dags").body)}, "param.name": {"x"}, "param.times": {"1"}})
		if r.status != http.StatusForbidden {
			t.Errorf("viewer trigger: %d, want 403", r.status)
		}
	})
}

// The run page lists the instances; an op marks one and clears the run
// (keeping task state when asked), each audited with its options; a viewer
// sees neither form.
func TestRunPageMarkClear(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TISuccess, core.TIFailed)
		viewer := e.loggedIn(core.RoleViewer)
		vpage := viewer.get("/dags/etl/runs/r1")
		if vpage.status != http.StatusOK || !strings.Contains(vpage.body, `<tr id="task-load">`) || strings.Contains(vpage.body, "/clear") {
			t.Fatalf("viewer run page: %d, want the instances and no clear form:\n%s", vpage.status, vpage.body)
		}

		op := e.loggedIn(core.RoleOp)
		csrf := csrfOf(t, op.get("/dags/etl/runs/r1").body)
		mark := url.Values{"csrf": {csrf}, "state": {"success"}, "map_index": {"-1"}, "back": {"/dags/etl/runs/r1"}}
		r := op.post("/dags/etl/runs/r1/tasks/load/mark", mark)
		if r.status != http.StatusOK || !strings.Contains(r.body, "Mark 1 task instance as success?") || !strings.Contains(r.body, `<a href="/dags/etl/runs/r1">Cancel</a>`) {
			t.Fatalf("mark before its confirmation: %d, want the instance it would change\n%s", r.status, r.body)
		}
		mark.Set("confirm", "yes")
		if r = op.post("/dags/etl/runs/r1/tasks/load/mark", mark); r.status != http.StatusSeeOther {
			t.Fatalf("mark: %d\n%s", r.status, r.body)
		}
		if ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "load", core.NoMapIndex); ti.State != core.TISuccess {
			t.Fatalf("load after mark success = %s", ti.State)
		}
		if r := op.post("/dags/etl/runs/r1/tasks/load/mark", url.Values{"csrf": {csrf}, "state": {"running"}}); r.status != http.StatusBadRequest {
			t.Errorf("mark running: %d, want 400", r.status)
		}

		// A clear first lists what it would reset and changes nothing.
		r = op.post("/dags/etl/runs/r1/clear", url.Values{"csrf": {csrf}, "keep_task_state": {"true"}})
		if r.status != http.StatusOK || !strings.Contains(r.body, "Clear 2 task instances?") || !strings.Contains(r.body, `name="confirm" value="yes"`) ||
			!strings.Contains(r.body, `name="keep_task_state" value="true"`) {
			t.Fatalf("clear before its confirmation: %d, want the instances it would reset\n%s", r.status, r.body)
		}
		if ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "extract", core.NoMapIndex); ti.TryNumber != 1 {
			t.Fatalf("the clear's confirmation page changed extract (try %d)", ti.TryNumber)
		}
		r = op.post("/dags/etl/runs/r1/clear", url.Values{"csrf": {csrf}, "keep_task_state": {"true"}, "confirm": {"yes"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("clear: %d\n%s", r.status, r.body)
		}
		ti, _ := st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "extract", core.NoMapIndex)
		if ti.State != core.TINone || ti.TryNumber != 2 {
			t.Errorf("extract after clear: state %q try %d, want none and a new try", ti.State, ti.TryNumber)
		}
		audit, _ := st.AuditLogList(t.Context(), &store.AuditLogListParams{Action: "dag_run.clear"})
		if len(audit) != 1 || audit[0].User != "op" || !strings.Contains(audit[0].Detail, "keep_task_state=true") {
			t.Errorf("clear audit = %+v, want one by op with keep_task_state=true", audit)
		}
		if r := viewer.post("/dags/etl/runs/r1/clear", url.Values{"csrf": {csrfOf(t, vpage.body)}}); r.status != http.StatusForbidden {
			t.Errorf("viewer clear: %d, want 403", r.status)
		}
	})
}

// The graph view draws every task and dependency as SVG, coloured by the
// chosen run; the durations view charts each task; the run page has its
// Gantt chart.
func TestGraphDurationsGantt(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TISuccess, core.TIFailed)
		e.run("r2", core.TIRunning, core.TINone)
		b := e.loggedIn(core.RoleViewer)

		g := b.get("/dags/etl/graph")
		if g.status != http.StatusOK || strings.Count(g.body, `class="edge"`) != 1 || !strings.Contains(g.body, `aria-label="extract: running"`) ||
			!strings.Contains(g.body, `aria-label="load: no status"`) || !strings.Contains(g.body, `<option value="r2" selected>`) {
			t.Fatalf("graph of the newest run: %d; want 2 nodes in r2's states and 1 edge:\n%s", g.status, g.body)
		}
		if g := b.get("/dags/etl/graph?run=r1"); !strings.Contains(g.body, `aria-label="load: failed"`) {
			t.Error("graph of r1 does not show load failed")
		}
		if g := b.get("/dags/etl/graph?run=nope"); g.status != http.StatusNotFound {
			t.Errorf("graph of an unknown run: %d, want 404", g.status)
		}
		if d := b.get("/dags/etl/durations"); d.status != http.StatusOK || strings.Count(d.body, `<figure class="dchart">`) != 2 {
			t.Errorf("durations: %d; want a chart per task", d.status)
		}
		if r := b.get("/dags/etl/runs/r1"); !strings.Contains(r.body, `<svg class="gantt"`) || !strings.Contains(r.body, ">extract</text>") {
			t.Error("run page has no Gantt chart with a row per instance")
		}
	})
}
