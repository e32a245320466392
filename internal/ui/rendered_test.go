package ui_test

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// A try's rendered templates: the task's arguments rendered over the run
// (conf over params), the try and the run's XCom, next to the arguments as
// written; a template that fails says why.
func TestRenderedTemplates(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		v := e.sync(core.DAG{DagID: "tmpl", Params: map[string]any{"who": "world", "n": 1}, Tasks: []core.Task{
			{TaskID: "up", Operator: "noop"},
			{TaskID: "say", Operator: "bash", DependsOn: []string{"up"}, Args: map[string]any{
				"bash_command": `echo {{ .params.who }} {{ .params.n }} {{ .run_id }} try {{ .ti.try_number }} {{ xcom_pull "up" }}`}},
			{TaskID: "bad", Operator: "bash", Args: map[string]any{"bash_command": `echo {{ xcom_pull "nowhere" }}`}},
		}})
		tis := []store.NewTaskInstance{}
		for _, id := range []string{"up", "say", "bad"} {
			tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: id, MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "bash"})
		}
		if _, err := st.DagRunCreate(t.Context(), &store.DagRunCreateParams{DagID: "tmpl", RunID: "r1", RunType: core.RunManual, State: core.RunRunning,
			Conf: json.RawMessage(`{"who":"ada"}`), DagVersionID: v, Now: e.clk.Now(), TaskInstances: tis}); err != nil {
			t.Fatal(err)
		}
		if err := st.XComSet(t.Context(), &core.XCom{DagID: "tmpl", RunID: "r1", TaskID: "up", MapIndex: core.NoMapIndex,
			Key: core.DefaultXComKey, Value: json.RawMessage(`"from-up"`), Timestamp: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		b := e.loggedIn(core.RoleViewer)
		if p := b.get("/dags/tmpl/runs/r1/tasks/say"); !strings.Contains(p.body, `href="/dags/tmpl/runs/r1/tasks/say/rendered"`) {
			t.Error("the task-instance page does not link its rendered templates")
		}
		r := b.get("/dags/tmpl/runs/r1/tasks/say/rendered")
		body := html.UnescapeString(r.body)
		if r.status != http.StatusOK || !strings.Contains(body, `<code>bash_command</code></th><td><pre class="value">echo ada 1 r1 try 1 from-up</pre>`) || !strings.Contains(body, `{{ .params.who }}`) {
			t.Fatalf("rendered say: %d; want conf over params, the run, the try and the XCom, and the template as written:\n%s", r.status, body)
		}
		r = b.get("/dags/tmpl/runs/r1/tasks/bad/rendered")
		if r.status != http.StatusOK || !strings.Contains(r.body, `class="error"`) || !strings.Contains(r.body, "bash_command") {
			t.Errorf("rendered bad: %d; want the error naming the field:\n%s", r.status, r.body)
		}
		if r := b.get("/dags/tmpl/runs/r1/tasks/nope/rendered"); r.status != http.StatusNotFound {
			t.Errorf("rendered of an unknown task: %d, want 404", r.status)
		}
	})
}
