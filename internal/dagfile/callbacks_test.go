package dagfile

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

func TestLoadCallbacks(t *testing.T) {
	t.Parallel()
	dags, err := Load("callbacks.yaml", []byte(`
dag_id: cb
default_args:
  on_retry: "echo retrying {{ .task_id }}"
on_failure:
  - command: "notify-ops {{ .dag_id }} {{ .run_id }}"
on_success: "echo done"
tasks:
  - task_id: load
    operator: bash
    bash_command: "exit 1"
    on_execute: "echo start"
    on_failure:
      - "echo first"
      - {command: "echo second $WEIR_CALLBACK_ID"}
  - task_id: quiet
    operator: noop
    on_retry: "echo its own"
`))
	if err != nil {
		t.Fatal(err)
	}
	dag := dags[0]
	cmds := func(specs ...string) []core.CallbackSpec {
		out := make([]core.CallbackSpec, len(specs))
		for i, s := range specs {
			out[i] = core.CallbackSpec{Command: s, TemplateSyntax: core.TemplateGo} // detected: the DAG has Go templates
		}
		return out
	}
	want := &core.Callbacks{OnSuccess: cmds("echo done"), OnFailure: cmds("notify-ops {{ .dag_id }} {{ .run_id }}")}
	if diff := cmp.Diff(want, dag.Callbacks); diff != "" {
		t.Errorf("DAG callbacks (-want +got):\n%s", diff)
	}
	want = &core.Callbacks{OnExecute: cmds("echo start"), OnFailure: cmds("echo first", "echo second $WEIR_CALLBACK_ID"),
		OnRetry: cmds("echo retrying {{ .task_id }}")}
	if diff := cmp.Diff(want, dag.Task("load").Callbacks); diff != "" {
		t.Errorf("task load's callbacks, on_retry from default_args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&core.Callbacks{OnRetry: cmds("echo its own")}, dag.Task("quiet").Callbacks); diff != "" {
		t.Errorf("task quiet's callbacks, its own over default_args (-want +got):\n%s", diff)
	}
}
