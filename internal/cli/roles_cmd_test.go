package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// A worker given no credential on a machine without the api-servers' keys
// exits saying to pass one, and makes no key: it used to create its own
// jwt_secret, mint a credential no api-server accepts, and then advise
// sharing jwt_secret with workers, which never need it.
func TestWorkerWithoutCredentialMakesNoKey(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, _, errOut := weirRun(t, []string{"USER=tester"}, "worker", "--home", home, "--api-url", "http://127.0.0.1:9", "--name", "w5")
	if code == 0 || !strings.Contains(errOut, "no worker credential: pass --token or set WEIR_WORKER_TOKEN") {
		t.Errorf("worker without a credential: exit %d, stderr:\n%s\nwant an error saying to pass one", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "secrets", "jwt_secret")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worker made a signing key (%v)", err)
	}
}

// A liveness probe with a misspelt role fails saying so, not that no such
// process is alive (which it would have said for ever).
func TestJobsCheckRefusesAnUnknownRole(t *testing.T) {
	t.Parallel()
	code, _, errOut := weirRun(t, []string{"USER=tester"}, "jobs", "check", "--role", "trigerer", "--home", t.TempDir())
	if code == 0 || !strings.Contains(errOut, `--role "trigerer" is not a role: use one of scheduler, dag-processor, triggerer, api-server, worker`) {
		t.Errorf("jobs check --role trigerer: exit %d, stderr:\n%s", code, errOut)
	}
}

// `weir tasks test` of a failing task that has downstream tasks fails: its
// run removes the other tasks, and the removed downstream leaves made the
// run, and the command, succeed.
func TestTasksTestOfAFailingTaskWithDownstreamsFails(t *testing.T) {
	t.Parallel()
	dags := t.TempDir()
	if err := os.WriteFile(filepath.Join(dags, "chain.yaml"), []byte("dag_id: chain\nschedule: null\ntasks:\n"+
		"  - {task_id: a, operator: bash, bash_command: exit 1}\n  - {task_id: b, operator: bash, depends_on: a, bash_command: echo b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := weirRun(t, []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}, "tasks", "test", "chain", "a", "--dags", dags)
	if code == 0 || !strings.Contains(out, "of chain: failed") {
		t.Errorf("tasks test of a failing task: exit %d\n%s\n%s\nwant 1, the run failed", code, out, errOut)
	}
}

// `weir tasks test` runs its task once, whatever its retries, as `airflow
// tasks test` does: a failing task with retries (default delay 5 min) used
// to keep the test waiting, silent, for its retry.
func TestTasksTestRunsOneTry(t *testing.T) {
	t.Parallel()
	dags := t.TempDir()
	if err := os.WriteFile(filepath.Join(dags, "r.yaml"), []byte("dag_id: r\nschedule: null\ntasks:\n"+
		"  - {task_id: f, operator: bash, retries: 3, bash_command: exit 3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := weirRun(t, []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}, "tasks", "test", "r", "f", "--dags", dags)
	if code == 0 || !strings.Contains(out, "of r: failed") || strings.Contains(out, "(try 2)") {
		t.Errorf("tasks test of a failing task with retries: exit %d\n%s\n%s\nwant 1 after one try", code, out, errOut)
	}
}

// `weir dags test DAG DATE` and `weir tasks test DAG TASK DATE` run with
// that logical date, as Airflow's take it, for the templates; a date that
// is none is refused, naming it.
func TestTestsTakeALogicalDate(t *testing.T) {
	t.Parallel()
	dags, env := t.TempDir(), []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}
	if err := os.WriteFile(filepath.Join(dags, "ld.yaml"), []byte("dag_id: ld\nschedule: \"@daily\"\nstart_date: 2024-01-01\ntasks:\n"+
		"  - {task_id: t, operator: bash, bash_command: 'echo ds={{ ds }} start={{ data_interval_start }}'}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The data interval is a manual run's, as in Airflow: the latest
	// complete day at the logical date.
	for args, want := range map[string]string{
		"dags test ld 2024-01-05":              "t | ds=2024-01-05 start=2024-01-04T00:00:00+00:00",
		"tasks test ld t 2024-02-01T06:00:00Z": "t | ds=2024-02-01 start=2024-01-31T00:00:00+00:00",
	} {
		if code, out, errOut := weirRun(t, env, append(strings.Fields(args), "--dags", dags)...); code != 0 || !strings.Contains(out, want) {
			t.Errorf("weir %s: exit %d\n%s\n%s\nwant %q", args, code, out, errOut, want)
		}
	}
	if code, _, errOut := weirRun(t, env, "dags", "test", "ld", "yesterday", "--dags", dags); code == 0 || !strings.Contains(errOut, `LOGICAL_DATE "yesterday"`) {
		t.Errorf("dags test ld yesterday: exit %d, %s", code, errOut)
	}
}

// A scheduler or triggerer stopped (SIGTERM: its context ends) says so,
// as the api-server and the worker do: an operator reading its log sees
// the stop was heard.
func TestSchedulerAndTriggererSayTheyStopped(t *testing.T) {
	t.Parallel()
	for _, role := range []string{"scheduler", "triggerer"} {
		t.Run(role, func(t *testing.T) {
			t.Parallel()
			env := []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}
			if code, _, errOut := weirRun(t, env, "db", "migrate"); code != 0 {
				t.Fatal(errOut)
			}
			ctx, cancel := context.WithCancel(t.Context())
			var errOut syncbuf.Buffer
			done := make(chan int, 1)
			go func() {
				done <- cli.Run(ctx, []string{role, "--dags", t.TempDir()}, cli.Options{Stdout: io.Discard, Stderr: &errOut, Environ: env})
			}()
			wait.Until(t, 30*time.Second, "the "+role+" to beat", func() bool {
				code, _, _ := weirRun(t, env, "jobs", "check", "--role", role)
				return code == 0
			})
			cancel()
			if code := <-done; code != 0 || !strings.Contains(errOut.String(), "msg=\""+role+" stopped\"") {
				t.Errorf("%s stopped: exit %d, log:\n%s\nwant exit 0 and a line saying it stopped", role, code, errOut.String())
			}
		})
	}
}

// `weir db reset` refuses while a process of the database runs (its
// heartbeat is recent), naming it: the process would go on against an
// empty database. With --force the reset goes ahead.
func TestDBResetRefusesWhileAProcessRuns(t *testing.T) {
	t.Parallel()
	env := []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}
	if code, _, errOut := weirRun(t, env, "db", "migrate"); code != 0 {
		t.Fatal(errOut)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"scheduler", "--dags", t.TempDir()}, cli.Options{Stdout: io.Discard, Stderr: io.Discard, Environ: env})
	}()
	defer func() { cancel(); <-done }()
	wait.Until(t, 30*time.Second, "the scheduler to beat", func() bool {
		code, _, _ := weirRun(t, env, "jobs", "check", "--role", "scheduler")
		return code == 0
	})
	code, _, errOut := weirRun(t, env, "db", "reset", "--yes")
	if code == 0 || !strings.Contains(errOut, "process(es) of this database beat within their heartbeat threshold (scheduler on ") || !strings.Contains(errOut, "pass --force") {
		t.Errorf("db reset beside a running scheduler: exit %d, %s; want a refusal naming it", code, errOut)
	}
	if code, out, errOut := weirRun(t, env, "db", "reset", "--yes", "--force"); code != 0 || !strings.Contains(out, "database reset") {
		t.Errorf("db reset --force: exit %d, %s %s", code, out, errOut)
	}
}

// A second standalone on a home whose standalone runs is refused, naming
// the first's pid, and changes nothing (the home's port stays the
// first's); once the first stops, the home is free again.
func TestASecondStandaloneOnAHomeIsRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"USER=tester", "WEIR_HOME=" + home}
	ctx, cancel := context.WithCancel(t.Context())
	var errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"standalone", "--port", "0", "--dags", t.TempDir()}, cli.Options{Stdout: io.Discard, Stderr: &errOut, Environ: env})
	}()
	wait.Until(t, 30*time.Second, "the standalone to beat", func() bool {
		code, _, _ := weirRun(t, env, "jobs", "check", "--role", "scheduler")
		return code == 0
	})
	toml := func() string {
		b, err := os.ReadFile(filepath.Join(home, "weir.toml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := toml()
	code, _, stderr := weirRun(t, env, "standalone", "--port", "18999")
	if code == 0 || !strings.Contains(stderr, "a standalone already runs on home "+home) ||
		!strings.Contains(stderr, fmt.Sprintf("(process %d holds", os.Getpid())) {
		t.Errorf("second standalone: exit %d, %q; want a refusal naming the first", code, stderr)
	}
	if toml() != before {
		t.Error("the refused standalone rewrote the home's weir.toml")
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("first standalone: exit %d\n%s", code, errOut.String())
	}
	release, err := cli.LockHomeForTest(home)
	if err != nil {
		t.Fatalf("the home after the standalone stopped: %v", err)
	}
	release()
}

// `weir db migrate` says what it did: from which schema version to which,
// or that there was nothing to migrate.
func TestDBMigrateSaysWhatItDid(t *testing.T) {
	t.Parallel()
	env := []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}
	code, out, errOut := weirRun(t, env, "db", "migrate")
	if code != 0 || !strings.Contains(out, "sqlite database migrated from schema version 0 to ") {
		t.Errorf("first migrate: exit %d, %q %q; want the versions it went from and to", code, out, errOut)
	}
	code, out, _ = weirRun(t, env, "db", "migrate")
	if code != 0 || !strings.Contains(out, "(nothing to migrate)") {
		t.Errorf("second migrate: exit %d, %q; want nothing to migrate", code, out)
	}
}

// `weir version -o json` says the version, the Go version and the
// Execution API versions the binary speaks (its commit when the build
// recorded one: not under go test).
func TestVersionAsJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := weirRun(t, []string{"USER=tester"}, "version", "-o", "json")
	var v struct {
		Version, Go, ExecutionAPI, OldestExecutionAPI string
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version == "" || !strings.HasPrefix(v.Go, "go") {
		t.Fatalf("version -o json: exit %d, %q %q", code, out, errOut)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	if raw["execution_api"] == "" || raw["oldest_execution_api"] == nil {
		t.Errorf("version -o json = %s, want the Execution API versions", out)
	}
}
