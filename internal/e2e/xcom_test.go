package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// xcomDAG passes a value between bash tasks with the in-task CLI, and pulls
// a missing key to show a task can test `weir xcom pull`'s exit code.
const xcomDAG = `dag_id: xcom_cli
schedule: null
tasks:
  - task_id: up
    operator: bash
    bash_command: |
      weir xcom push greeting '{"text": "hi from up", "n": 3}'
  - task_id: down
    operator: bash
    depends_on: up
    bash_command: |
      echo "pulled $(weir xcom pull --task up --key greeting)"
  - task_id: missing
    operator: bash
    depends_on: up
    bash_command: |
      err=$(weir xcom pull --task up --key nope 2>&1 >/dev/null); code=$?
      echo "exit code $code; stderr: $err"
      test "$code" = 1
`

// TestInTaskXComCLI runs `weir xcom push|pull` inside bash tasks.
func TestInTaskXComCLI(t *testing.T) {
	t.Parallel()
	dags := t.TempDir()
	writeFile(t, filepath.Join(dags, "xcom_cli.yaml"), xcomDAG)
	s := startStandalone(t, t.TempDir(), dags)
	api := s.api
	api.WaitDAG("xcom_cli")
	api.Trigger("xcom_cli", "x1", nil)
	api.WaitRunSuccess("xcom_cli", "x1")

	var entry struct {
		Value json.RawMessage `json:"value"`
	}
	api.Get(runPath("xcom_cli", "x1")+"/taskInstances/up/xcomEntries/greeting", &entry)
	var value any
	if err := json.Unmarshal(entry.Value, &value); err != nil {
		t.Fatalf("XCom greeting of up is not JSON: %s", entry.Value)
	}
	if diff := cmp.Diff(map[string]any{"text": "hi from up", "n": 3.0}, value); diff != "" {
		t.Errorf("XCom greeting pushed by up (-want +got):\n%s", diff)
	}
	if log := api.Log("xcom_cli", "x1", "down", 1); !strings.Contains(log, "pulled {") || !strings.Contains(log, `"hi from up"`) {
		t.Errorf("down did not echo the pulled value; log:\n%s", log)
	}
	log := api.Log("xcom_cli", "x1", "missing", 1)
	if !strings.Contains(log, "exit code 1;") || !strings.Contains(log, `"nope"`) {
		t.Errorf("pulling a missing key: want exit code 1 and a message naming the key on stderr; log:\n%s", log)
	}
}
