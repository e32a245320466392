package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// TestTriggerDataCannotInjectCommands replays issue 13's finding 2 against
// `weir standalone`: an op triggers the shipped hello with a conf built to
// break out of its command, and with a run id that is a command
// substitution. Neither runs a command; a DAG that still templates a param
// unquoted loads with a DAG warning.
func TestTriggerDataCannotInjectCommands(t *testing.T) {
	t.Parallel()
	dags, out := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "hello.yaml"), readFile(t, filepath.Join(examplesDir(), "hello.yaml")))
	writeFile(t, filepath.Join(dags, "unsafe.yaml"), `dag_id: unsafe
params: {name: {default: world}}
tasks:
  - task_id: greet
    operator: bash
    bash_command: echo "Hello, {{ .params.name }}"
`)
	s := startStandalone(t, t.TempDir(), dags)
	api := s.api.with(t)
	api.WaitDAG("hello")

	// The conf, writing to a file of ours instead of the worker's cwd.
	marker := filepath.Join(out, "f")
	name := `"; id > ` + marker + `; echo "`
	api.Trigger("hello", "inject-conf", map[string]any{"name": name})
	api.WaitRunSuccess("hello", "inject-conf")
	if log := api.Log("hello", "inject-conf", "greet", 1); !strings.Contains(log, "Hello, "+name+"!") {
		t.Errorf("greet did not greet the conf's name literally:\n%s", log)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the conf's injected command ran: %s exists", marker)
	}

	status, body := api.Do(http.MethodPost, "/api/v2/dags/hello/dagRuns", map[string]any{"dag_run_id": "$(id>x)"})
	if status != http.StatusBadRequest || !strings.Contains(string(body), "allowed_run_id_pattern") {
		t.Errorf("trigger with run id $(id>x): status %d %s; want 400 naming allowed_run_id_pattern", status, body)
	}

	api.WaitDAG("unsafe")
	var ws struct {
		DagWarnings  []core.DagWarning `json:"dag_warnings"`
		TotalEntries int               `json:"total_entries"`
	}
	api.Get("/api/v2/dagWarnings?dag_id=unsafe", &ws)
	if ws.TotalEntries != 1 || !strings.Contains(ws.DagWarnings[0].Message, "{{.params.name}}") {
		b, _ := json.Marshal(ws)
		t.Errorf("warnings of unsafe: %s; want one naming {{.params.name}}", b)
	}
	api.Get("/api/v2/dagWarnings?dag_id=hello", &ws)
	if ws.TotalEntries != 0 {
		t.Errorf("the shipped hello has warnings: %+v", ws.DagWarnings)
	}
}
