package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
)

// `weir dags test` runs what the folder defines now: a DAG renamed in its
// file is not run from its recorded version; a DAG recorded from another
// folder (a deployment's) is, when the test's folder lacks it; a second
// file defining the DAG is said, although the test records no import
// error.
func TestDagsTestRunsWhatTheFolderDefines(t *testing.T) {
	t.Parallel()
	h := newTestHome(t, map[string]string{"alpha": ""})
	ctx := t.Context()

	if code, _, stderr := h.run(ctx, "tasks", "test", "alpha", "nosuch"); code == 0 ||
		!strings.Contains(stderr, `dag "alpha" has no task "nosuch"; its tasks: t`) || strings.Contains(stderr, "import-errors") {
		t.Errorf("tasks test of a task the DAG lacks: exit %d, want its tasks listed, no import-errors hint\n%s", code, stderr)
	}

	elsewhere := t.TempDir()
	var out, errOut bytes.Buffer
	code := cli.Run(ctx, []string{"dags", "test", "alpha", "--dags", elsewhere}, cli.Options{Stdout: &out, Stderr: &errOut,
		Environ: []string{"WEIR_HOME=" + h.home, "USER=tester"}})
	if code != 0 || !strings.Contains(out.String(), "of alpha: success") || !strings.Contains(errOut.String(), "recorded version") {
		t.Errorf("a test from a folder lacking a DAG recorded from another: exit %d, want its recorded version run\n%s\n%s", code, out.String(), errOut.String())
	}

	dup := strings.Replace(readFile(t, filepath.Join(h.dags, "alpha.yaml")), "echo alpha", "echo beta", 1)
	if err := os.WriteFile(filepath.Join(h.dags, "zz.yaml"), []byte(dup), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := h.run(ctx, "dags", "test", "alpha")
	if code != 0 || !strings.Contains(stdout, "t | alpha\n") || !strings.Contains(stderr, "zz.yaml") || !strings.Contains(stderr, "already defined") {
		t.Errorf("a DAG defined twice: exit %d, want alpha.yaml's run and zz.yaml's import error said\n%s\n%s", code, stdout, stderr)
	}

	renamed := strings.Replace(readFile(t, filepath.Join(h.dags, "alpha.yaml")), "dag_id: alpha", "dag_id: alpha2", 1)
	for _, f := range []string{"alpha.yaml", "zz.yaml"} {
		if err := os.WriteFile(filepath.Join(h.dags, f), []byte(renamed), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr = h.run(context.WithoutCancel(ctx), "dags", "test", "alpha")
	if code == 0 || !strings.Contains(stderr, `dag "alpha" is not defined in `+h.dags) || strings.Contains(stdout, "t | alpha") {
		t.Errorf("a DAG renamed in its file: exit %d, want it not found, not its recorded version run\n%s\n%s", code, stdout, stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A test runs every task of its DAG, whatever queue a task names: no
// other worker takes a test's tries.
func TestDagsTestRunsTasksOfEveryQueue(t *testing.T) {
	t.Parallel()
	h := newTestHome(t, nil)
	dag := "dag_id: queues\nschedule: null\ntasks:\n  - task_id: gpu\n    operator: bash\n    queue: gpu\n    bash_command: echo on gpu\n"
	if err := os.WriteFile(filepath.Join(h.dags, "queues.yaml"), []byte(dag), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if code, out, errOut := h.run(ctx, "dags", "test", "queues"); code != 0 || !strings.Contains(out, "gpu | on gpu\n") {
		t.Errorf("a test of a task on queue gpu: exit %d, want it run\n%s\n%s", code, out, errOut)
	}
}
