package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// A Jinja DAG's templates render on the worker with Airflow's names:
// ti.xcom_pull over the Execution API, params (the seeded run's conf
// overrides who), filters, statements.
func TestWorkerRendersJinja(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	dag := core.DAG{DagID: "d", TemplateSyntax: core.TemplateJinja, Params: map[string]any{"who": "it's me"}, Tasks: []core.Task{
		{TaskID: "say", Operator: operator.Bash, Args: map[string]any{"bash_command": "echo world", "do_xcom_push": true}},
		{TaskID: "use", Operator: operator.Bash, Args: map[string]any{"bash_command": `echo "got {{ ti.xcom_pull(task_ids='say') }}" ` +
			`{{ params.who | shquote }} try={{ ti.try_number }} {% for x in [1, 2] %}{{ x }}{% endfor %}`}},
	}}
	env.SeedRun(t, dag, "r1", core.TIScheduled)
	startWorker(t, env, operator.NewRegistry(), nil)
	say, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "say", -1)
	queue(t, env, say.ID)
	wait.Until(t, 30*time.Second, "say", func() bool { return stateOf(t, env, "r1", "say") == core.TISuccess })
	use, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "use", -1)
	queue(t, env, use.ID)
	wait.Until(t, 30*time.Second, "use", func() bool { return stateOf(t, env, "r1", "use") == core.TISuccess })
	use, _ = env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "use", -1)
	if s := readLog(t, env, use); !strings.Contains(s, "got world conf try=1 12\n") {
		t.Errorf("use's log (rendered Jinja) = %q", s)
	}
}
