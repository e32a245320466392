package dagfile

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWarningsUnquotedTriggerData: a bash_command that templates params or
// conf unquoted loads, with a warning naming the task and the place.
func TestWarningsUnquotedTriggerData(t *testing.T) {
	t.Parallel()
	src := `dag_id: greet
params:
  name: {default: world}
tasks:
  - task_id: unsafe
    operator: bash
    bash_command: echo "Hello, {{ .params.name }}! {{ .ds }}"
  - task_id: quoted
    operator: bash
    bash_command: echo Hello, {{ .params.name | shquote }}
  - task_id: from_env
    operator: bash
    bash_command: echo "Hello, $WEIR_PARAM_NAME"
  - task_id: http_is_not_shell
    operator: http
    endpoint: /greet/{{ .params.name }}
`
	dags, err := Load("greet.yaml", []byte(src))
	if err != nil {
		t.Fatalf("a DAG with an unquoted interpolation must still load: %v", err)
	}
	got := Warnings(&dags[0])
	if len(got) != 1 || !strings.Contains(got[0], `task "unsafe"`) ||
		!strings.Contains(got[0], "{{.params.name}} at line 1, column 17") || !strings.Contains(got[0], "shquote") {
		t.Errorf("warnings %q: want one for task unsafe naming {{.params.name}} and shquote", got)
	}
}

// TestShippedExamplesHaveNoWarnings: the examples show the safe forms.
func TestShippedExamplesHaveNoWarnings(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "dags", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		dags, err := LoadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for i := range dags {
			if w := Warnings(&dags[i]); len(w) > 0 {
				t.Errorf("%s: %s", f, strings.Join(w, "\n"))
			}
		}
	}
}
