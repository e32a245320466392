package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/cli"
)

// `weir dags test` prints each task's log lines, prefixed by the task, as
// they are written, then the task instances in dependency order (here the
// reverse of the file's), as `airflow dags test` does; `weir tasks test`
// prints its one task's lines. The first bash try of each runs in the shell
// the test started beside its run's creation. The logs are stored where
// [logging] log_store says, as standalone's are: with database no file is
// made, and `weir tasks logs` reads them after the test (ADR 0046).
func TestDagsTestStreamsTaskLogs(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"database", "folder"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			testStreamsTaskLogs(t, store)
		})
	}
}

func testStreamsTaskLogs(t *testing.T, logStore string) {
	home, dags := t.TempDir(), t.TempDir()
	dag := "dag_id: twostep\nschedule: null\ntasks:\n" +
		"  - task_id: second\n    operator: bash\n    bash_command: printf 'from second\\nno newline at the end'\n    depends_on: [first]\n" +
		"  - task_id: first\n    operator: bash\n    bash_command: echo one; echo two\n"
	if err := os.WriteFile(filepath.Join(dags, "twostep.yaml"), []byte(dag), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"WEIR_HOME=" + home, "USER=tester", "WEIR__LOGGING__LOG_STORE=" + logStore}
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := cli.Run(t.Context(), append(args, "--dags", dags), cli.Options{Stdout: &out, Stderr: &errOut, Environ: env}); code != 0 {
			t.Fatalf("weir %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
		return out.String()
	}
	const warmed = "bash started ahead (a spare shell)"
	out := run("dags", "test", "twostep", "2026-01-02")
	if !regexp.MustCompile(`first \| .*` + regexp.QuoteMeta(warmed)).MatchString(out) {
		t.Errorf("dags test: the first try did not run in the shell started with the test:\n%s", out)
	}
	for _, line := range []string{"first | one\n", "first | two\n", "second | from second\n", "second | no newline at the end"} {
		if !strings.Contains(out, line) {
			t.Errorf("dags test output lacks %q:\n%s", line, out)
		}
	}
	table := regexp.MustCompile(`(?m)^TASK_ID.*\n(first\s.*\n)(second\s.*\n)`)
	if !table.MatchString(out) {
		t.Errorf("dags test: want the table with first before second (dependency order):\n%s", out)
	}
	if strings.Index(out, "first | two") > strings.Index(out, "TASK_ID") {
		t.Errorf("dags test printed the logs after the table:\n%s", out)
	}
	files, err := filepath.Glob(filepath.Join(home, "logs", "dag_id=twostep", "*", "task_id=first", "attempt=1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"database": 0, "folder": 1}[logStore]; len(files) != want {
		t.Errorf("log_store = %s: %d log files for the try, want %d: %v", logStore, len(files), want, files)
	}
	runID := regexp.MustCompile(`test__\S+`).FindString(out)
	if logs := run("tasks", "logs", "twostep", runID, "first"); !strings.Contains(logs, "one\ntwo\n") {
		t.Errorf("tasks logs of the test's first try (run %q): want its lines:\n%s", runID, logs)
	}
	out = run("tasks", "test", "twostep", "first")
	if !strings.Contains(out, "first | one\n") || strings.Contains(out, "second |") || !strings.Contains(out, warmed) {
		t.Errorf("tasks test first: want only first's lines:\n%s", out)
	}
}

// Every try's lines are printed once, under its own label, whether the
// stream met the try running or already ended: a retried task's first try
// ("flaky"), its second ("flaky (try 2)") and the task after it.
func TestDagsTestPrintsEachTryOnce(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	dag := "dag_id: retried\nschedule: null\ndefault_args:\n  retries: 1\n  retry_delay: 100ms\ntasks:\n" +
		"  - task_id: flaky\n    operator: bash\n    bash_command: echo \"try $WEIR_TRY_NUMBER\"; sleep 0.3; [ \"$WEIR_TRY_NUMBER\" -ge 2 ]\n" +
		"  - task_id: after\n    operator: bash\n    depends_on: [flaky]\n    bash_command: echo done\n"
	if err := os.WriteFile(filepath.Join(dags, "retried.yaml"), []byte(dag), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := cli.Run(t.Context(), []string{"dags", "test", "retried", "--dags", dags}, cli.Options{Stdout: &out, Stderr: &errOut,
		Environ: []string{"WEIR_HOME=" + home, "USER=tester"}}); code != 0 {
		t.Fatalf("dags test: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, line := range []string{"flaky | try 1\n", "flaky (try 2) | try 2\n", "after | done\n"} {
		if n := strings.Count(out.String(), line); n != 1 {
			t.Errorf("dags test printed %q %d times, want once:\n%s", line, n, out.String())
		}
	}
}

// Lines are printed in the order the tries started, not by task id: an
// upstream's last line before its downstream's first, although the
// downstream's task id sorts first.
func TestDagsTestPrintsTriesInTheOrderTheyStarted(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	dag := "dag_id: ordered\nschedule: null\ntasks:\n" +
		"  - task_id: z_first\n    operator: bash\n    bash_command: echo one; sleep 0.3; echo last\n" +
		"  - task_id: a_after\n    operator: bash\n    depends_on: [z_first]\n    bash_command: echo first\n"
	if err := os.WriteFile(filepath.Join(dags, "ordered.yaml"), []byte(dag), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		var out, errOut bytes.Buffer
		if code := cli.Run(t.Context(), []string{"dags", "test", "ordered", "--dags", dags}, cli.Options{Stdout: &out, Stderr: &errOut,
			Environ: []string{"WEIR_HOME=" + home, "USER=tester"}}); code != 0 {
			t.Fatalf("dags test: exit %d\n%s\n%s", code, out.String(), errOut.String())
		}
		last, first := strings.Index(out.String(), "z_first | last\n"), strings.Index(out.String(), "a_after | first\n")
		if last < 0 || first < 0 || first < last {
			t.Fatalf("z_first's last line at %d, a_after's first at %d: want the upstream's first\n%s", last, first, out.String())
		}
	}
}
