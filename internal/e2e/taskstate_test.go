package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// stateCLIDAG checks the in-task CLI's exit codes and leaves a key that
// expires a second after it is written, for cleanup.
const stateCLIDAG = `dag_id: state_cli
schedule: null
tasks:
  - task_id: codes
    operator: bash
    bash_command: |
      weir task-state get nope; echo "missing key: exit $?"
      weir task-state set k null; echo "null: exit $?"
      weir task-state set k NaN; echo "NaN: exit $?"
      weir task-state set k 1 --retention 7; echo "bare number retention: exit $?"
      echo "default: $(weir task-state get nope --default '{"a": 1}')"
      weir task-state set scratch '[1, 2]' --retention 1s
      weir task-state set keep 1 --retention never
      echo "scratch: $(weir task-state get scratch)"
`

// TestTaskStateCheckpointResume runs examples/dags/checkpoint_resume.yaml
// (docs/requirements.md#ts-1: a retry resumes from the checkpoint the failed try wrote;
// TS-6: the REST API shows each key's writer), then the in-task CLI's exit
// codes, then `weir state-store cleanup-task-store` with and without
// --dry-run (GC-1).
func TestTaskStateCheckpointResume(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "checkpoint_resume.yaml"), readFile(t, filepath.Join(examplesDir(), "checkpoint_resume.yaml")))
	writeFile(t, filepath.Join(dags, "state_cli.yaml"), stateCLIDAG)
	s := startStandalone(t, home, dags)
	api := s.api

	api.WaitDAG("checkpoint_resume")
	api.Trigger("checkpoint_resume", "c1", nil)
	api.WaitRunSuccess("checkpoint_resume", "c1")
	tries := api.Tries("checkpoint_resume", "c1", "ingest")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].State != core.TISuccess {
		t.Fatalf("tries of ingest = %+v, want try 1 failed and try 2 success", tries)
	}
	log1, log2 := api.Log("checkpoint_resume", "c1", "ingest", 1), api.Log("checkpoint_resume", "c1", "ingest", 2)
	if !strings.Contains(log1, "loaded page 7") || !strings.Contains(log1, "worker lost at 70 %") || strings.Contains(log1, "loaded page 8") {
		t.Errorf("try 1 should load pages 1-7 and fail; log:\n%s", log1)
	}
	if !strings.Contains(log2, "try 2 resumes after page 7") || strings.Contains(log2, "loaded page 7") || !strings.Contains(log2, "loaded page 10") {
		t.Errorf("try 2 should resume at page 8; log:\n%s", log2)
	}
	var list struct {
		Entries []struct {
			Key         string           `json:"key"`
			Value       json.RawMessage  `json:"value"`
			UpdatedBy   core.StateWriter `json:"last_updated_by"`
			NeverExpire bool             `json:"never_expire"`
		} `json:"entries"`
	}
	api.Get(runPath("checkpoint_resume", "c1")+"/taskInstances/ingest/state-store", &list)
	got := map[string]string{}
	for _, e := range list.Entries {
		got[e.Key] = string(e.Value)
		if e.UpdatedBy.TryNumber != 2 {
			t.Errorf("key %s was last written by try %d, want 2", e.Key, e.UpdatedBy.TryNumber)
		}
		if e.Key == "summary" && !e.NeverExpire {
			t.Errorf("summary was written with --retention never but is not never-expire")
		}
	}
	if got["last_page"] != "10" || got["progress"] != `{"pages_done":10,"of":10}` || got["summary"] != `{"pages":10,"status":"done"}` {
		t.Errorf("task state of ingest = %v", got)
	}

	api.WaitDAG("state_cli")
	api.Trigger("state_cli", "s1", nil)
	api.WaitRunSuccess("state_cli", "s1")
	log := api.Log("state_cli", "s1", "codes", 1)
	for _, want := range []string{`no task state key "nope"`, "missing key: exit 1", "null cannot be stored", "null: exit 2",
		"NaN: exit 2", `retention "7" is not a duration`, "bare number retention: exit 2", `default: {"a":1}`, "scratch: [1,2]"} {
		if !strings.Contains(log, want) {
			t.Errorf("log of codes lacks %q:\n%s", want, log)
		}
	}

	// GC-1: once scratch has expired, a dry run lists it (and only it) and
	// deletes nothing; the real cleanup deletes it; never-expire keys stay.
	var dry string
	waitFor(t, "scratch to expire", func() (bool, string) {
		dry = mustWeir(t, nil, "state-store", "cleanup-task-store", "--dry-run", "--home", home)
		return strings.Contains(dry, "1 expired task state rows would be deleted"), dry
	})
	if !strings.Contains(dry, "state_cli") || !strings.Contains(dry, "scratch") || strings.Contains(dry, "keep") {
		t.Errorf("dry run output:\n%s", dry)
	}
	if out := mustWeir(t, nil, "state-store", "list", "--dag", "state_cli", "--home", home); !strings.Contains(out, "scratch") {
		t.Errorf("the dry run deleted scratch:\n%s", out)
	}
	if out := mustWeir(t, nil, "state-store", "cleanup-task-store", "--home", home); !strings.Contains(out, "deleted 1 expired task state rows") {
		t.Errorf("cleanup output:\n%s", out)
	}
	out := mustWeir(t, nil, "state-store", "list", "--dag", "state_cli", "--home", home)
	if strings.Contains(out, "scratch") || !strings.Contains(out, "keep") || !strings.Contains(out, "never") {
		t.Errorf("after cleanup scratch must be gone and keep (never) stay:\n%s", out)
	}
}
