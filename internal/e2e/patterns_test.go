package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// stateEntry is one task-state key as GET .../state-store/{key} returns it.
type stateEntry struct {
	Value       json.RawMessage  `json:"value"`
	UpdatedBy   core.StateWriter `json:"last_updated_by"`
	NeverExpire bool             `json:"never_expire"`
}

// stateValue reads one task-state key of an unmapped task instance over the
// REST API; found is false on 404.
func (c *client) stateValue(dagID, runID, taskID, key string) (e stateEntry, found bool) {
	c.T.Helper()
	status, b := c.Do(http.MethodGet, runPath(dagID, runID)+"/taskInstances/"+taskID+"/state-store/"+key, nil)
	switch status {
	case http.StatusNotFound:
		return e, false
	case http.StatusOK:
		if err := json.Unmarshal(b, &e); err != nil {
			c.T.Fatalf("decode state-store/%s: %v: %s", key, err, b)
		}
		return e, true
	default:
		c.T.Fatalf("GET state-store/%s: status %d: %s", key, status, b)
		return e, false
	}
}

// waitLog waits until the log of one try of an unmapped task contains want
// and returns it. The log may not exist yet when the wait starts.
func (c *client) waitLog(dagID, runID, taskID string, try int, want string) string {
	c.T.Helper()
	var log string
	path := fmt.Sprintf("%s/taskInstances/%s/logs/%d", runPath(dagID, runID), taskID, try)
	waitFor(c.T, fmt.Sprintf("log of %s try %d to show %q", taskID, try, want), func() (bool, string) {
		status, b, err := c.Try(http.MethodGet, path, nil)
		if err != nil || status != http.StatusOK {
			return false, fmt.Sprintf("status %d, %v: %s", status, err, b)
		}
		var l api.LogChunk
		if err := json.Unmarshal(b, &l); err != nil {
			return false, err.Error()
		}
		log = string(l.Text())
		return strings.Contains(log, want), log
	})
	return log
}

// TestProgressReadableWhileRunning runs examples/dags/progress_report.yaml
// (the seeds' progress-metadata pattern; docs/requirements.md#ts-1, #ts-6): while
// process_items is still running (held half way by its pause file), the
// REST API returns the {"done", "total"} it wrote, with the writing try;
// after the pause is released the task finishes and reports 6 of 6.
func TestProgressReadableWhileRunning(t *testing.T) {
	t.Parallel()
	dags, home := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "progress_report.yaml"), readFile(t, filepath.Join(examplesDir(), "progress_report.yaml")))
	pause := filepath.Join(t.TempDir(), "continue")
	const dag, runID, task = "progress_report", "progress", "process_items"

	s := startStandalone(t, home, dags)
	s.api.WaitDAG(dag)
	s.api.Trigger(dag, runID, map[string]any{"pause_file": pause})
	s.api.waitLog(dag, runID, task, 1, "pausing at 3 of 6")
	e, ok := s.api.stateValue(dag, runID, task, "progress")
	if !ok || string(e.Value) != `{"done":3,"total":6}` || e.UpdatedBy.TryNumber != 1 {
		t.Errorf("progress mid-run = %+v (found %t), want {\"done\":3,\"total\":6} written by try 1", e, ok)
	}
	if ti := s.api.TaskInstance(dag, runID, task); ti.State != core.TIRunning {
		t.Errorf("the task is %s while paused, want running", ti.State)
	}

	if err := os.WriteFile(pause, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.api.WaitRunSuccess(dag, runID)
	if e, _ := s.api.stateValue(dag, runID, task, "progress"); string(e.Value) != `{"done":6,"total":6}` {
		t.Errorf("progress after the run = %s, want 6 of 6", e.Value)
	}
}
