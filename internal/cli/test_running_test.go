package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
)

// `weir dags test` runs at once, as Airflow's dag.test() does, even when
// the DAG's max_active_runs are all taken: its run is created running,
// not queued behind them. Here the DAG's only slot is held by a run whose
// task waits an hour for its retry.
func TestDagsTestRunsBesideMaxActiveRuns(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	dag := "dag_id: single\nschedule: null\nmax_active_runs: 1\nis_paused_upon_creation: false\n" +
		"tasks:\n  - task_id: t\n    operator: bash\n    bash_command: echo ran\n"
	if err := os.WriteFile(filepath.Join(dags, "single.yaml"), []byte(dag), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(ctx, append(args, "--dags", dags), cli.Options{Stdout: &out, Stderr: &errOut,
			Environ: []string{"WEIR_HOME=" + home, "USER=tester"}})
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run(t.Context(), "dags", "test", "single"); code != 0 { // records the DAG
		t.Fatalf("first dags test: exit %d\n%s\n%s", code, out, errOut)
	}

	st, err := sqlite.Open(t.Context(), filepath.Join(home, "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, now := t.Context(), time.Now().UTC()
	v, err := st.DagVersionLatest(ctx, "single")
	if err != nil {
		t.Fatal(err)
	}
	tiID := uuid.NewString()
	blocker, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "single", RunID: "blocker", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: v.ID, Now: now, TaskInstances: []store.NewTaskInstance{{ID: tiID,
			TaskID: "t", MapIndex: -1, MaxTries: 2, Operator: "bash", Queue: core.DefaultQueue, Pool: core.DefaultPool}}})
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{tiID}, To: core.TIUpForRetry,
		Now: now, NextRetryAt: &later}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	limited, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code, out, errOut := run(limited, "dags", "test", "single")
	if code != 0 || !strings.Contains(out, "t | ran\n") || !strings.Contains(out, "of single: success") {
		t.Fatalf("dags test beside a run holding max_active_runs: exit %d, want its task run and its run a success\nstdout:\n%s\nstderr:\n%s",
			code, out, errOut)
	}
	st, err = sqlite.Open(t.Context(), filepath.Join(home, "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r, err := st.DagRunGetByID(ctx, blocker.ID); err != nil || r.State != core.RunRunning {
		t.Errorf("the run holding the slot: %v, %v; want it still running, left alone", r, err)
	}
}
