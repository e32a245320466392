package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/ui"
)

// writeLog appends to the log of one try of etl's extract in r1.
func (e *env) writeLog(try int, text string) {
	e.t.Helper()
	ti, err := e.st.TaskInstanceGetByKey(e.t.Context(), "etl", "r1", "extract", core.NoMapIndex)
	if err != nil {
		e.t.Fatal(err)
	}
	k := tasklog.KeyOf(ti)
	k.TryNumber = try
	if err := tasklog.Append(e.logs, k, []byte(text)); err != nil {
		e.t.Fatal(err)
	}
}

// The task-instance page lists every try, shows the log of the current one
// (tailed from where it ends while the try may still write) or of the
// try chosen, and the instance's XCom.
func TestTaskInstanceTriesLogXCom(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TIFailed, core.TIUpstreamFailed)
		e.writeLog(1, "first try: boom\n")
		op := e.loggedIn(core.RoleOp)
		page := op.get("/dags/etl/runs/r1/tasks/extract")
		if page.status != http.StatusOK || !strings.Contains(page.body, "first try: boom") || strings.Contains(page.body, "data-tail") {
			t.Fatalf("failed try's page: %d; want its log and no tail:\n%s", page.status, page.body)
		}
		// A task that never ran (load: upstream_failed) has no try yet, as
		// Airflow shows try 0: no row of tries, no log to wait for.
		if p := op.get("/dags/etl/runs/r1/tasks/load"); !strings.Contains(p.body, "not run yet (up to") ||
			!strings.Contains(p.body, "No try has run yet.") || !strings.Contains(p.body, "(the try has not started: no log)") {
			t.Errorf("a task that never ran shows a try:\n%s", p.body)
		}
		if r := op.post("/dags/etl/runs/r1/clear", url.Values{"csrf": {csrfOf(t, page.body)}, "task_id": {"extract"}, "confirm": {"yes"}}); r.status != http.StatusSeeOther {
			t.Fatalf("clear extract: %d\n%s", r.status, r.body)
		}
		e.writeLog(2, "second try: working\n")
		if err := st.XComSet(t.Context(), &core.XCom{DagID: "etl", RunID: "r1", TaskID: "extract", MapIndex: core.NoMapIndex,
			Key: "rows", Value: json.RawMessage(`{"n":42}`), Timestamp: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}

		page = op.get("/dags/etl/runs/r1/tasks/extract")
		for _, want := range []string{"Log of try 2", "second try: working", `href="/dags/etl/runs/r1/tasks/extract?try=1#log"`,
			`data-tail="/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/logs/2?token=20"`, "<code>rows</code>", "&#34;n&#34;: 42"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("task-instance page lacks %s", want)
			}
		}
		if strings.Contains(page.body, "first try: boom") {
			t.Error("the current try's page shows the first try's log")
		}
		first := op.get("/dags/etl/runs/r1/tasks/extract?try=1")
		if !strings.Contains(first.body, "first try: boom") || strings.Contains(first.body, "data-tail") {
			t.Error("?try=1 does not show the first try's log (untailed)")
		}
		for _, bad := range []string{"?try=3", "?try=0", "?map_index=x"} {
			if r := op.get("/dags/etl/runs/r1/tasks/extract" + bad); r.status != http.StatusBadRequest {
				t.Errorf("%s: %d, want 400", bad, r.status)
			}
		}
		if r := op.get("/dags/etl/runs/r1/tasks/nope"); r.status != http.StatusNotFound {
			t.Errorf("unknown task: %d, want 404", r.status)
		}
		// A mapped task's page without ?map_index= lists its instances: the
		// run page's table kept to the task (and, filtered, to a state).
		e.run("mapped", core.TISuccess, core.TISuccess, core.TISuccess, core.TISuccess, core.TIRunning)
		if r := op.get("/dags/etl/runs/mapped/tasks/fan"); r.status != http.StatusSeeOther ||
			r.header.Get("Location") != "/dags/etl/runs/mapped?task_id=fan#tis" {
			t.Errorf("a mapped task without map_index: %d to %q\n%s", r.status, r.header.Get("Location"), r.body)
		}
		if r := op.get("/dags/etl/runs/mapped/tasks/fan/rendered"); r.status != http.StatusNotFound ||
			!strings.Contains(r.body, "task fan of run mapped is mapped: open one of its 3 instances with ?map_index=0 to 2") {
			t.Errorf("a mapped task's rendered page without map_index: %d\n%s", r.status, r.body)
		}
		list := op.get("/dags/etl/runs/mapped?task_id=fan")
		if n := strings.Count(list.body, `<tr id="task-fan-`); n != 3 || strings.Contains(list.body, `<tr id="task-extract"`) {
			t.Errorf("the run page kept to fan lists %d of its instances (want 3), or another task's", n)
		}
		if r := op.get("/dags/etl/runs/mapped?state=bogus"); r.status != http.StatusBadRequest {
			t.Errorf("a bad state filter: %d, want 400", r.status)
		}
		// The grid's link to a mapped task's instances lands on the first
		// of them in the run page.
		if grid := op.get("/dags/etl"); !strings.Contains(grid.body, `/dags/etl/runs/mapped?task_id=fan#task-fan"`) {
			t.Error("the grid does not link the mapped task's cell to its instances")
		}
		if run := op.get("/dags/etl/runs/mapped"); strings.Count(run.body, `id="task-fan"`) != 1 || !strings.Contains(run.body, `id="task-fan-0"`) {
			t.Errorf("the run page has %d anchors task-fan, want one (beside task-fan-0)", strings.Count(run.body, `id="task-fan"`))
		}
	})
}

// A log longer than a page holds shows its end, where a failure says why,
// from a whole line, with how much is not shown; the download serves the
// whole log as a file.
func TestLongLogShowsItsEndAndDownloads(t *testing.T) {
	t.Parallel()
	// A store whose reads stop short, as the database's does (at a number
	// of chunks): the page still reads on to the end.
	dir := t.TempDir()
	e := newEnv(t, sqlitetest.Open(t), func(c *ui.Config, _ *bool) { c.Logs, c.LogFolder = shortReads{tasklog.Folder(dir)}, dir })
	e.logs = dir
	e.run("r1", core.TIFailed, core.TIUpstreamFailed)
	var b strings.Builder
	for i := 0; b.Len() <= tasklog.MaxReadChunk; i++ {
		fmt.Fprintf(&b, "progress %06d of a long job\n", i)
	}
	b.WriteString("FATAL the real cause\n")
	whole := b.String()
	e.writeLog(1, whole)
	v := e.loggedIn(core.RoleViewer)
	page := v.get("/dags/etl/runs/r1/tasks/extract")
	if page.status != http.StatusOK || !strings.Contains(page.body, "FATAL the real cause") ||
		strings.Contains(page.body, "progress 000000 ") || !strings.Contains(page.body, "are not shown here, its end is") {
		t.Fatalf("a long log's page: %d; want its end, not its start, and a note", page.status)
	}
	if i := strings.Index(page.body, `<pre class="log"`); i < 0 || !strings.Contains(page.body[i:i+200], ">progress ") {
		t.Errorf("the shown log does not start at a whole line: %q", page.body[i:i+200])
	}
	dl := v.get("/dags/etl/runs/r1/tasks/extract/log?try=1")
	if dl.status != http.StatusOK || dl.body != whole || !strings.Contains(dl.header.Get("Content-Disposition"), `attachment; filename=etl_r1_extract_try1.log`) {
		t.Errorf("download: %d, %d bytes of %d, disposition %q", dl.status, len(dl.body), len(whole), dl.header.Get("Content-Disposition"))
	}
	if r := v.get("/dags/etl/runs/r1/tasks/extract/log?try=9"); r.status != http.StatusBadRequest {
		t.Errorf("download of try 9: %d, want 400", r.status)
	}
}

// shortReads returns at most 4 KiB a read.
type shortReads struct{ tasklog.Logs }

func (s shortReads) Read(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	b, next, err := s.Logs.Read(ctx, key, offset)
	if len(b) > 4096 {
		b, next = b[:4096], offset+4096
	}
	return b, next, err
}

// The task state panel shows each key with its value, when and by whom it
// was written and when it expires; an op sets, edits, deletes and clears
// keys, each audited; a bad value changes nothing; a viewer sees the
// values but no forms and is refused if it posts.
func TestTaskStatePanel(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		e.run("r1", core.TISuccess, core.TISuccess)
		const page = "/dags/etl/runs/r1/tasks/extract"
		op := e.loggedIn(core.RoleOp)
		csrf := csrfOf(t, op.get(page).body)
		set := func(key, value, retention string) response {
			return op.post(page+"/state/set", url.Values{"csrf": {csrf}, "back": {page}, "key": {key}, "value": {value}, "retention": {retention}})
		}
		if r := set("cursor", `{"offset": 5}`, "7d"); r.status != http.StatusSeeOther || r.header.Get("Location") != page {
			t.Fatalf("set: %d to %q\n%s", r.status, r.header.Get("Location"), r.body)
		}
		if r := set("keep", `"forever"`, "never"); r.status != http.StatusSeeOther {
			t.Fatalf("set never: %d\n%s", r.status, r.body)
		}
		body := op.get(page).body
		for _, want := range []string{"2 keys", "<code>cursor</code>", "&#34;offset&#34;: 5", "a user (see the audit log)", "2026-03-08 12:00:00Z",
			"<td>never</td>", `aria-label="Delete key cursor"`} {
			if !strings.Contains(body, want) {
				t.Errorf("state panel lacks %s:\n%s", want, body)
			}
		}

		for name, c := range map[string][3]string{
			"bad JSON":      {"cursor", "{offset: 6}", ""},
			"null":          {"cursor", "null", ""},
			"bad retention": {"cursor", "1", "soon"},
			"empty key":     {"", "1", ""},
		} {
			if r := set(c[0], c[1], c[2]); r.status != http.StatusBadRequest || !strings.Contains(r.body, `<a href="`+page+`">Back to the form</a>`) {
				t.Errorf("%s: %d, want 400 with a way back to the form\n%s", name, r.status, r.body)
			}
		}
		if e, err := st.StateGet(t.Context(), core.TaskScope("etl", "r1", "extract", core.NoMapIndex), "cursor"); err != nil || string(e.Value) != `{"offset":5}` {
			t.Errorf("cursor after refused edits = %s, %v; want unchanged", e.Value, err)
		}

		if r := set("cursor", `{"offset": 6}`, ""); r.status != http.StatusSeeOther {
			t.Fatalf("edit: %d", r.status)
		}
		if r := op.post(page+"/state/delete", url.Values{"csrf": {csrf}, "back": {page}, "key": {"keep"}}); r.status != http.StatusSeeOther {
			t.Fatalf("delete: %d", r.status)
		}
		body = op.get(page).body
		if !strings.Contains(body, "&#34;offset&#34;: 6") || strings.Contains(body, "<code>keep</code>") {
			t.Error("after edit and delete the panel shows the old value or the deleted key")
		}

		viewer := e.loggedIn(core.RoleViewer)
		if a := viewer.get("/audit?action=task_state.delete"); !strings.Contains(a.body, "<td>key=keep</td>") ||
			!strings.Contains(a.body, "<td>op</td>") || strings.Contains(a.body, "task_state.set</code>") {
			t.Errorf("audit page filtered by task_state.delete: want op's delete of keep only:\n%s", a.body)
		}
		vbody := viewer.get(page).body
		if !strings.Contains(vbody, "<code>cursor</code>") || strings.Contains(vbody, "/state/set") || strings.Contains(vbody, "/state/delete") {
			t.Error("viewer's panel: want the values and no edit forms")
		}
		if r := viewer.post(page+"/state/delete", url.Values{"csrf": {csrfOf(t, vbody)}, "key": {"cursor"}}); r.status != http.StatusForbidden {
			t.Errorf("viewer delete: %d, want 403", r.status)
		}

		if r := op.post(page+"/state/clear", url.Values{"csrf": {csrf}, "back": {page}}); r.status != http.StatusSeeOther {
			t.Fatalf("clear: %d", r.status)
		}
		if !strings.Contains(op.get(page).body, "No state.") {
			t.Error("after clear the panel still lists keys")
		}
		var actions []string
		entries, err := st.AuditLogList(t.Context(), &store.AuditLogListParams{User: "op", Page: store.Page{OrderBy: "event_log_id"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range entries {
			if strings.HasPrefix(a.Action, "task_state.") {
				actions = append(actions, a.Action+" "+a.Detail)
			}
		}
		want := []string{"task_state.set key=cursor retention=168h0m0s", "task_state.set key=keep retention=never",
			"task_state.set key=cursor retention=", "task_state.delete key=keep", "task_state.clear all_map_indices=false"}
		if strings.Join(actions, "|") != strings.Join(want, "|") {
			t.Errorf("audit = %q\nwant %q", actions, want)
		}
	})
}
