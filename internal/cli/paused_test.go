package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// New DAGs start paused by default, as with Airflow's [core]
// dags_are_paused_at_creation = true; a DAG file's is_paused_upon_creation:
// false starts its DAG unpaused. `weir dags test` runs a paused DAG (as
// `airflow dags test` does), and `weir dags trigger` of a paused DAG says
// its run stays queued until the DAG is unpaused.
func TestNewDAGsStartPaused(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dags := t.TempDir()
			env := []string{"WEIR_HOME=" + t.TempDir(), "USER=tester"} // no [core] setting: the default
			if engine == "postgres" {
				env = append(env, "WEIR__DATABASE__CONN="+pgtest.DSN(t))
			}
			for name, head := range map[string]string{"waits": "", "starts": "is_paused_upon_creation: false\n"} {
				dag := head + "dag_id: " + name + "\nschedule: null\ntasks:\n  - task_id: t\n    operator: bash\n    bash_command: echo ran\n"
				if err := os.WriteFile(filepath.Join(dags, name+".yaml"), []byte(dag), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			weir := func(args ...string) (string, string) {
				t.Helper()
				out, errOut, code := weirIn(t, env, "", append(args, "--dags", dags)...)
				if code != 0 {
					t.Fatalf("weir %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
				}
				return out, errOut
			}
			weir("db", "migrate")
			for _, id := range []string{"waits", "starts"} {
				if out, _ := weir("dags", "test", id); !strings.Contains(out, "t | ran\n") || !strings.Contains(out, "of "+id+": success") {
					t.Errorf("dags test %s: want the task to run and the run to succeed, paused or not:\n%s", id, out)
				}
			}
			out, _ := weir("dags", "list", "--output", "json")
			var list []core.DagModel
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("dags list --output json: %v\n%s", err, out)
			}
			paused := map[string]bool{}
			for _, d := range list {
				paused[d.DagID] = d.IsPaused
			}
			if want := map[string]bool{"waits": true, "starts": false}; len(paused) != 2 || paused["waits"] != want["waits"] || paused["starts"] != want["starts"] {
				t.Errorf("paused flags after the DAGs were first recorded = %v, want %v (default paused, is_paused_upon_creation: false unpaused)", paused, want)
			}

			hint := "dag waits is paused: the run stays queued until it is unpaused (weir dags unpause waits)\n"
			if out, errOut := weir("dags", "trigger", "waits", "--run-id", "r"); !strings.Contains(out, "(state queued)") || errOut != hint {
				t.Errorf("dags trigger of a paused DAG: want a queued run and on stderr %q; stdout %q, stderr %q", hint, out, errOut)
			}
			if _, errOut := weir("dags", "trigger", "starts", "--run-id", "r"); errOut != "" {
				t.Errorf("dags trigger of an unpaused DAG: want nothing on stderr, got %q", errOut)
			}
		})
	}
}

// Through the REST API (after `weir login`), `weir dags trigger` of a
// paused DAG says the same as against the database.
func TestTriggerOfPausedDAGRemote(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		s.run("dags", "pause", "etl")
		out, errOut, code := weirIn(t, s.remoteEnv(), "", "dags", "trigger", "etl", "--run-id", "remote")
		hint := "dag etl is paused: the run stays queued until it is unpaused (weir dags unpause etl)\n"
		if code != 0 || !strings.Contains(out, "(state queued)") || errOut != hint {
			t.Errorf("remote dags trigger of a paused DAG: exit %d, stdout %q, stderr %q; want a queued run and on stderr %q", code, out, errOut, hint)
		}
	})
}
