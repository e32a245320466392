package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// variablesDAG reads variables in a template (as a string and as JSON,
// one of them a secret) and with the in-task CLI.
const variablesDAG = `dag_id: variables
schedule: null
tasks:
  - task_id: read
    operator: bash
    bash_command: |
      echo "region={{ .var.value.region }} rows={{ .var.json.limits.rows }} token={{ .var.value.api_token }}"
      echo "in-task: $(weir variables get region) $(weir variables get limits --json | tr -d ' \n')"
  - task_id: missing
    operator: bash
    bash_command: echo "{{ .var.value.nowhere }}"
`

// docs/variables.md end to end (standalone, the built binary): variables
// created over REST reach a bash task's template and its in-task CLI; a
// secret's value is masked in the log; a template reading a variable that
// does not exist fails the try, naming it.
func TestVariablesReachTasks(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "variables.yaml"), variablesDAG)
	s := startStandalone(t, home, dags)
	api := s.api
	for _, v := range []map[string]any{
		{"key": "region", "value": "eu-west-1"},
		{"key": "limits", "value": `{"rows": 1000}`},
		{"key": "api_token", "value": "s3cr3t-t0ken"},
	} {
		if code, body := api.Do(http.MethodPost, "/api/v2/variables", v); code != http.StatusCreated {
			t.Fatalf("create variable %v: %d %s", v["key"], code, body)
		}
	}
	api.WaitDAG("variables")
	api.Trigger("variables", "v1", nil)
	run := api.WaitRunDone("variables", "v1")
	log := api.Log("variables", "v1", "read", 1)
	if !strings.Contains(log, "region=eu-west-1 rows=1000 token=***") || strings.Contains(log, "s3cr3t") ||
		!strings.Contains(log, `in-task: eu-west-1 {"rows":1000}`) {
		t.Errorf("log of read:\n%s\nwant the variables rendered and the token masked", log)
	}
	if ti := api.TaskInstance("variables", "v1", "missing"); ti.State != "failed" {
		t.Errorf("missing is %s, want failed (run %s)", ti.State, run.State)
	}
	if log := api.Log("variables", "v1", "missing", 1); !strings.Contains(log, `variable "nowhere" does not exist`) {
		t.Errorf("log of missing:\n%s\nwant the missing variable named", log)
	}
}
