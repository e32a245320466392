package e2e

import (
	"path/filepath"
	"regexp"
	"testing"
)

// cleanupIntervalDAG writes three task-state keys: one that expires a
// second later, one that never expires and one that expires in an hour.
const cleanupIntervalDAG = `dag_id: cleanup_interval
schedule: null
tasks:
  write:
    operator: bash
    bash_command: |
      set -e
      weir task-state set short 1 --retention 1s
      weir task-state set keep 2 --retention never
      weir task-state set hour 3 --retention 1h
`

// cleanerLog is the line the scheduler role's periodic cleanup logs when it
// deleted a task-state row.
var cleanerLog = regexp.MustCompile(`task state cleanup.*deleted=1 `)

// TestCleanupIntervalStartsCleaner runs the built binary's standalone with
// WEIR__STATE_STORE__CLEANUP_INTERVAL=1s (docs/requirements.md#gc-2): with nobody running
// `weir state-store cleanup-task-store`, the scheduler role deletes the
// expired row on its own and logs it, while the never-expire row and the
// unexpired row stay.
func TestCleanupIntervalStartsCleaner(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "cleanup_interval.yaml"), cleanupIntervalDAG)
	s := startStandalone(t, home, dags, "WEIR__STATE_STORE__CLEANUP_INTERVAL=1s")
	api := s.api

	api.WaitDAG("cleanup_interval")
	api.Trigger("cleanup_interval", "c1", nil)
	api.WaitRunSuccess("cleanup_interval", "c1")
	waitFor(t, "the periodic cleanup to delete the expired key short", func() (bool, string) {
		if _, found := api.stateValue("cleanup_interval", "c1", "write", "short"); found {
			return false, "short is still stored"
		}
		return true, ""
	})
	s.WaitOutput(t, cleanerLog)
	for _, key := range []string{"keep", "hour"} {
		if _, found := api.stateValue("cleanup_interval", "c1", "write", key); !found {
			t.Errorf("the periodic cleanup deleted %s, which has not expired", key)
		}
	}
}
