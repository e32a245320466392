package weir

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
)

// napDAG holds its DAG's one slot (max_active_tasks: 1) until the file
// stop exists: a test of it stopped before its run ended would leave the
// next test of it waiting for ever, unless the run is ended. Its retry
// would be queued for the stopped test's worker alone, never claimed.
func napDAG(stop string) string {
	return "dag_id: nap\nschedule: null\nmax_active_tasks: 1\ntasks:\n" +
		"  - task_id: nap\n    operator: bash\n    retries: 1\n    retry_delay: 0s\n" +
		"    bash_command: 'while [ ! -e " + stop + " ]; do sleep 0.05; done'\n" +
		"  - task_id: after\n    operator: bash\n    bash_command: 'true'\n    depends_on: [nap]\n"
}

// dagsTestStops: a `weir dags test` interrupted (SIGINT, as Ctrl-C) stops
// its try at once — not after [workers] shutdown_grace_period — and fails
// its run; one killed (SIGKILL) leaves its run to the next test's
// scheduler, which fails it once the killed process's job row has been
// silent for two heartbeats, and then runs its own; one whose reader goes
// away (`| head`) ends with an error and fails its run.
func dagsTestStops(t *testing.T, bin string) {
	home, dags := t.TempDir(), t.TempDir()
	stop := filepath.Join(t.TempDir(), "stop")
	if err := os.WriteFile(filepath.Join(dags, "nap.yaml"), []byte(napDAG(stop)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := func() (*exec.Cmd, *bytes.Buffer) {
		t.Helper()
		cmd := exec.Command(bin, "dags", "test", "nap", "--home", home, "--dags", dags)
		cmd.Env = append(os.Environ(), "WEIR__WORKERS__SHUTDOWN_GRACE_PERIOD=10m")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	napping := func(what string) core.DagRun {
		t.Helper()
		var run core.DagRun
		poll(ctx, t, what, func() bool {
			st, err := openStoreIfThere(t, home)
			if err != nil {
				return false
			}
			defer st.Close()
			rs, err := st.DagRunList(ctx, &store.DagRunListParams{DagID: "nap", States: []core.DagRunState{core.RunRunning}})
			if err != nil || len(rs) != 1 {
				return false
			}
			run = rs[0]
			tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, States: []core.TIState{core.TIRunning}})
			return err == nil && len(tis) == 1
		})
		return run
	}
	runState := func(run core.DagRun) (core.DagRunState, map[string]string) {
		t.Helper()
		st := openStore(t, home)
		r, err := st.DagRunGetByID(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]string{}
		for _, ti := range tis {
			states[ti.TaskID] = ti.State.String()
		}
		return r.State, states
	}

	// Ctrl-C.
	cmd, out := start()
	interrupted := napping("the first test's try to run")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
			t.Errorf("an interrupted test exited %d (%v), want 1\n%s", code, err, out)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("an interrupted test still ran a minute later (its try given the 10 m shutdown grace?)\n%s", out)
	}
	// Its killed try failed and would retry: marking the run failed skips
	// that retry, as Airflow's does.
	if state, tis := runState(interrupted); state != core.RunFailed || tis["nap"] != "skipped" || tis["after"] != "skipped" {
		t.Errorf("the interrupted test's run: %s %v, want failed, its tasks skipped\n%s", state, tis, out)
	}
	if !strings.Contains(out.String(), "marked the run failed") {
		t.Errorf("the interrupted test did not say it failed its run:\n%s", out)
	}

	// SIGKILL.
	cmd, out = start()
	killed := napping("the second test's try to run")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := os.WriteFile(stop, nil, 0o600); err != nil { // the killed try's shell ends; the next naps not
		t.Fatal(err)
	}
	next := exec.CommandContext(ctx, bin, "dags", "test", "nap", "--home", home, "--dags", dags)
	if got, err := next.CombinedOutput(); err != nil || !strings.Contains(string(got), "of nap: success") {
		t.Fatalf("the test after a killed one: %v\n%s\nthe killed one:\n%s", err, got, out)
	} else if !strings.Contains(string(got), "failed the run of a `weir dags test` process that stopped") {
		t.Errorf("the next test did not say it failed the killed test's run:\n%s", got)
	}
	if state, tis := runState(killed); state != core.RunFailed || tis["nap"] != "failed" || tis["after"] != "skipped" {
		t.Errorf("the killed test's run: %s %v, want failed, nap failed and after skipped", state, tis)
	}

	// Its reader gone (`weir dags test talk | head -3`): an error, not SIGPIPE's death.
	talk := "dag_id: talk\nschedule: null\ntasks:\n  - task_id: talk\n    operator: bash\n" +
		"    bash_command: 'while true; do echo tick; sleep 0.05; done'\n"
	if err := os.WriteFile(filepath.Join(dags, "talk.yaml"), []byte(talk), 0o600); err != nil {
		t.Fatal(err)
	}
	piped := exec.CommandContext(ctx, bin, "dags", "test", "talk", "--home", home, "--dags", dags)
	var errOut bytes.Buffer
	piped.Stderr = &errOut
	stdout, err := piped.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := piped.Start(); err != nil {
		t.Fatal(err)
	}
	lines, read := bufio.NewScanner(stdout), 0
	for read < 3 && lines.Scan() {
		read++
	}
	_ = stdout.Close()
	err = piped.Wait()
	if status, ok := piped.ProcessState.Sys().(syscall.WaitStatus); err == nil || !ok || status.Signaled() || status.ExitStatus() != 1 {
		t.Errorf("a test whose reader went away: %v, want exit status 1 (not killed by SIGPIPE)\n%s", err, errOut.String())
	}
	st := openStore(t, home)
	if r := latestRun(t, st, "talk"); r.State != core.RunFailed {
		t.Errorf("the run of a test whose reader went away: %s, want failed\n%s", r.State, errOut.String())
	}
}

// openStoreIfThere opens home's database once a process has created it;
// the caller closes it.
func openStoreIfThere(t *testing.T, home string) (store.Store, error) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(home, "weir.db")); err != nil {
		return nil, err
	}
	return sqlite.Open(t.Context(), filepath.Join(home, "weir.db"), sqlite.Options{})
}
