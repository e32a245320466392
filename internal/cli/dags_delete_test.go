package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestRunsClearAndDagsDeleteCLI: `weir runs clear` resets one run's task
// instances (only the failed ones with --only-failed; a dry run and a "no"
// change nothing); `weir dags delete` asks, then deletes the DAG and its
// history, and says its file brings it back.
func TestRunsClearAndDagsDeleteCLI(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		withInput := func(input string, args ...string) (string, string, int) {
			var out, errOut bytes.Buffer
			code := cli.Run(ctx, args, cli.Options{Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errOut, Environ: s.env})
			return out.String(), errOut.String(), code
		}
		s.run("dags", "trigger", "etl", "--run-id", "r1")
		finishExtract(t, s.st, "r1")
		load, err := s.st.TaskInstanceGetByKey(ctx, "etl", "r1", "load", -1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{load.ID}, To: core.TIFailed, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		tries := func() map[string]int {
			out := map[string]int{}
			for _, task := range []string{"extract", "load"} {
				ti, err := s.st.TaskInstanceGetByKey(ctx, "etl", "r1", task, -1)
				if err != nil {
					t.Fatal(err)
				}
				out[task] = ti.TryNumber
			}
			return out
		}
		if got := s.run("runs", "clear", "etl", "r1", "--only-failed", "--dry-run"); !strings.Contains(got, "would clear 1 task instances of run r1") {
			t.Errorf("dry run printed %q", got)
		}
		if _, _, code := withInput("n\n", "runs", "clear", "etl", "r1"); code == 0 {
			t.Error("answering no to runs clear: exit 0")
		}
		if got := tries(); got["extract"] != 1 || got["load"] != 1 {
			t.Fatalf("a dry run or a no cleared something: tries %v", got)
		}
		if got := s.run("runs", "clear", "etl", "r1", "--only-failed", "--yes"); !strings.Contains(got, "cleared 1 task instances of run r1") {
			t.Errorf("clear printed %q", got)
		}
		if got := tries(); got["extract"] != 1 || got["load"] != 2 {
			t.Errorf("after clearing only the failed: tries %v, want extract 1, load 2", got)
		}
		if a := s.lastAudit(); a.Action != "dag_run.clear" || a.Target != "etl/r1" {
			t.Errorf("audit = %+v", a)
		}
		if _, errOut, code := withInput("", "runs", "clear", "etl", "nope", "--yes"); code == 0 || !strings.Contains(errOut, `"nope"`) {
			t.Errorf("clear of an unknown run: exit %d, %q", code, errOut)
		}

		if out, _, code := withInput("n\n", "dags", "delete", "etl"); code == 0 || !strings.Contains(out, "Delete dag etl and its history (1 runs)?") {
			t.Errorf("answering no to dags delete: exit %d, %q", code, out)
		}
		if _, err := s.st.DagGet(ctx, "etl"); err != nil {
			t.Fatalf("a no deleted the DAG: %v", err)
		}
		// etl's file was removed from the DAGs folder before the delete.
		v, err := s.st.DagVersionLatest(ctx, "etl")
		if err != nil {
			t.Fatal(err)
		}
		v.Spec.FileLoc = filepath.Join(t.TempDir(), "etl.yaml")
		if _, _, err := s.st.DagSync(ctx, &store.DagSyncParams{Spec: v.Spec, Hash: "etl-file-gone", Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := withInput("y\n", "dags", "delete", "etl")
		if code != 0 || !strings.Contains(out, "deleted dag etl and 1 runs") {
			t.Errorf("dags delete answered yes: exit %d, %q", code, out)
		}
		// Its file is gone: not said to stay in the DAGs folder.
		if strings.Contains(errOut, "is not deleted") || !strings.Contains(errOut, "is not on this machine") {
			t.Errorf("dags delete of a DAG whose file is not here warned %q", errOut)
		}
		if _, err := s.st.DagGet(ctx, "etl"); err == nil {
			t.Error("etl still exists after dags delete")
		}
		if n, _ := s.st.TaskInstanceCount(ctx, &store.TaskInstanceListParams{DagID: "etl"}); n != 0 {
			t.Errorf("%d task instances of the deleted dag remain", n)
		}
		if a := s.lastAudit(); a.Action != "dag.delete" || a.Target != "etl" {
			t.Errorf("audit = %+v", a)
		}
		if _, errOut, code := withInput("", "dags", "delete", "etl", "--yes"); code == 0 || !strings.Contains(errOut, `"etl"`) {
			t.Errorf("deleting it again: exit %d, %q", code, errOut)
		}
	})
}
