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

// TestValidateGoCallbacks: a Go callback (made by the SDK) takes only its
// function and outlets, each one of the DAG's assets; outlets belong to
// Go callbacks only.
func TestValidateGoCallbacks(t *testing.T) {
	t.Parallel()
	d := core.DAG{DagID: "gocb", Assets: []core.Asset{{Name: "alerts", URI: "ops://alerts"}},
		Callbacks: &core.Callbacks{OnFailure: []core.CallbackSpec{
			{Function: "gocb#on_failure/0", Outlets: []string{"alerts"}},
			{Function: "gocb#on_failure/1", Outlets: []string{"nowhere"}},
			{Function: "gocb#on_failure/2", Command: "echo"},
			{Command: "echo", Outlets: []string{"alerts"}},
		}},
		Tasks: []core.Task{{TaskID: "a", Operator: "noop"}}}
	ApplyDefaults(&d)
	err := Validate(&d)
	if err == nil {
		t.Fatal("Validate accepted bad Go callbacks")
	}
	var got []string
	for _, p := range err.(*Error).Problems { //nolint:errorlint // Validate returns *Error
		got = append(got, p.Path+": "+p.Msg)
	}
	want := []string{
		`dag "gocb": on_failure[1].outlets[0]: "nowhere" is not one of the DAG's assets (declared: alerts)`,
		`dag "gocb": on_failure[2]: a Go callback (function "gocb#on_failure/2") takes only its function and outlets; command, notifier, conn_id, asset, partition_key and extra are not a function's`,
		`dag "gocb": on_failure[3].outlets: are a Go callback's (the assets its function may emit); a command or notifier takes none`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
