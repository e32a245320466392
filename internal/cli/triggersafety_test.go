package cli_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestTriggerRunIDPattern: `weir dags trigger` refuses a run id with shell
// syntax (issue 13, finding 2), naming [scheduler] allowed_run_id_pattern,
// and honours a configured pattern.
func TestTriggerRunIDPattern(t *testing.T) {
	t.Parallel()
	s := newSurfaces(t, "sqlite")
	trigger := func(env []string, runID string) (int, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), []string{"dags", "trigger", "etl", "--run-id", runID},
			cli.Options{Stdout: &out, Stderr: &errOut, Environ: append(append([]string{}, s.env...), env...)})
		return code, errOut.String()
	}
	if code, msg := trigger(nil, "$(id>x)"); code == 0 || !strings.Contains(msg, "allowed_run_id_pattern") ||
		!strings.Contains(msg, `"$(id>x)"`) {
		t.Errorf("trigger --run-id '$(id>x)': exit %d, stderr %q; want a refusal naming the pattern", code, msg)
	}
	strict := []string{"WEIR__SCHEDULER__ALLOWED_RUN_ID_PATTERN=^nightly-[0-9]+$"}
	if code, msg := trigger(strict, "adhoc"); code == 0 || !strings.Contains(msg, "^nightly-[0-9]+$") {
		t.Errorf("trigger adhoc under a strict pattern: exit %d, stderr %q", code, msg)
	}
	if code, msg := trigger(strict, "nightly-7"); code != 0 {
		t.Errorf("trigger nightly-7 under a strict pattern: exit %d, stderr %q", code, msg)
	}
	if code, msg := trigger([]string{"WEIR__SCHEDULER__ALLOWED_RUN_ID_PATTERN=("}, "r1"); code == 0 ||
		!strings.Contains(msg, "[scheduler] allowed_run_id_pattern") {
		t.Errorf("a broken pattern: exit %d, stderr %q; want a configuration error naming the option", code, msg)
	}
	runs, err := s.st.DagRunList(t.Context(), &store.DagRunListParams{})
	if err != nil || len(runs) != 1 || runs[0].RunID != "nightly-7" {
		t.Errorf("runs after the triggers: %+v (err %v); want only nightly-7", runs, err)
	}
}

// TestDagsListWarnings: `weir dags list-warnings` shows what the DAG
// processor recorded, filtered by DAG.
func TestDagsListWarnings(t *testing.T) {
	t.Parallel()
	s := newSurfaces(t, "sqlite")
	if out := s.run("dags", "list-warnings"); !strings.Contains(out, "no dag warnings") {
		t.Errorf("list-warnings with none: %q", out)
	}
	w := &core.DagWarning{DagID: "etl", WarningType: "unquoted trigger data", Message: "task \"t\": line one\nline two", Timestamp: time.Now()}
	if err := s.st.DagWarningSet(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	want := "etl (unquoted trigger data):\n  task \"t\": line one\n  line two\n"
	if out := s.run("dags", "list-warnings", "--dag-id", "etl"); !strings.Contains(out, want) {
		t.Errorf("list-warnings --dag-id etl = %q, want it to contain %q", out, want)
	}
	if out := s.run("dags", "list-warnings", "--dag-id", "other"); !strings.Contains(out, "no dag warnings") {
		t.Errorf("list-warnings --dag-id other = %q", out)
	}
}
