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

// A Jinja DAG's rendered view renders in Jinja, as its worker does:
// Airflow's names, ti.xcom_pull over the run's XCom, macros and filters.
func TestRenderedTemplatesJinja(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		v := e.sync(core.DAG{DagID: "jinja", TemplateSyntax: core.TemplateJinja, Params: map[string]any{"who": "world"}, Tasks: []core.Task{
			{TaskID: "up", Operator: "noop"},
			{TaskID: "say", Operator: "bash", DependsOn: []string{"up"}, Args: map[string]any{
				"bash_command": `echo {{ params.who | upper }} {{ run_id }} try {{ ti.try_number }} {{ ti.xcom_pull(task_ids='up') }} {{ macros.ds_add('2024-02-28', 1) }}`}},
		}})
		tis := []store.NewTaskInstance{}
		for _, id := range []string{"up", "say"} {
			tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: id, MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "bash"})
		}
		if _, err := st.DagRunCreate(t.Context(), &store.DagRunCreateParams{DagID: "jinja", RunID: "r1", RunType: core.RunManual, State: core.RunRunning,
			Conf: json.RawMessage(`{"who":"ada"}`), DagVersionID: v, Now: e.clk.Now(), TaskInstances: tis}); err != nil {
			t.Fatal(err)
		}
		if err := st.XComSet(t.Context(), &core.XCom{DagID: "jinja", RunID: "r1", TaskID: "up", MapIndex: core.NoMapIndex,
			Key: core.DefaultXComKey, Value: json.RawMessage(`"from-up"`), Timestamp: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		r := e.loggedIn(core.RoleViewer).get("/dags/jinja/runs/r1/tasks/say/rendered")
		body := html.UnescapeString(r.body)
		if r.status != http.StatusOK || !strings.Contains(body, `<code>bash_command</code></th><td><pre class="value">echo ADA r1 try 1 from-up 2024-02-29</pre>`) {
			t.Fatalf("rendered say: %d; want the Jinja template rendered:\n%s", r.status, body)
		}
	})
}
