package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With [logging] log_store = database, the built binary's standalone ships
// its worker's logs through the Execution API into the database: the REST
// API reads the running try's log live, `weir tasks logs` prints it
// complete after, and nothing is written to the log folder.
func TestTaskLogsKeptInTheDatabase(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		env = append(env, "WEIR__LOGGING__LOG_STORE=database")
		dags, home := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(dags, "progress_report.yaml"), readFile(t, filepath.Join(examplesDir(), "progress_report.yaml")))
		pause := filepath.Join(t.TempDir(), "continue")
		const dag, runID, task = "progress_report", "progress", "process_items"

		s := startStandalone(t, home, dags, env...)
		s.api.WaitDAG(dag)
		s.api.Trigger(dag, runID, map[string]any{"pause_file": pause})
		s.api.waitLog(dag, runID, task, 1, "pausing at 3 of 6")
		if err := os.WriteFile(pause, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		s.api.WaitRunSuccess(dag, runID)
		out := mustWeir(t, env, "tasks", "logs", dag, runID, task, "--home", home)
		if !strings.Contains(out, "pausing at 3 of 6") {
			t.Errorf("weir tasks logs printed %q, want the try's log", out)
		}
		if matches, _ := filepath.Glob(filepath.Join(home, "logs", "dag_id=*")); len(matches) > 0 {
			t.Errorf("log files written with log_store = database: %v", matches)
		}
	})
}
