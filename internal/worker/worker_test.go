package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/proctest"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// startWorker runs a worker against env until the test ends; stop cancels
// it and waits for Start to return.
func startWorker(t *testing.T, env *execapitest.Env, reg *operator.Registry, tune func(*Worker)) (stop func()) {
	t.Helper()
	w := &Worker{Client: env.WorkerClient(t, "w1"), WorkerID: "w1", Concurrency: 3, Registry: reg,
		HeartbeatInterval: 20 * time.Millisecond, ShutdownGrace: time.Minute, ClaimWait: time.Minute,
		KillGrace: 50 * time.Millisecond, Clock: env.Clock, Logger: slog.New(slog.DiscardHandler)}
	if tune != nil {
		tune(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func stateOf(t *testing.T, env *execapitest.Env, runID, taskID string) core.TIState {
	t.Helper()
	ti, err := env.Store.TaskInstanceGetByKey(context.Background(), "d", runID, taskID, core.NoMapIndex)
	if err != nil {
		t.Fatal(err)
	}
	return ti.State
}

func TestWorkerRunsTries(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	reg := operator.NewRegistry()
	_ = reg.Register("greet", func(ctx context.Context, tc operator.TaskContext) (any, error) {
		var up string
		if err := tc.XComPull(ctx, "say", "", -1, &up); err != nil {
			return nil, err
		}
		tc.Logger.Info("pulled", "value", up)
		return "hello " + up + " from " + tc.Params["who"].(string), nil
	})
	dag := core.DAG{DagID: "d", Params: map[string]any{"who": "params"}, Tasks: []core.Task{
		{TaskID: "say", Operator: operator.Bash, Args: map[string]any{"bash_command": `echo "run {{ .run_id }}"; echo world`, "do_xcom_push": true}},
		{TaskID: "fail", Operator: operator.Bash, Retries: 1, RetryDelay: core.Duration(time.Minute), Args: map[string]any{"bash_command": "echo boom >&2; exit 1"}},
		{TaskID: "skip", Operator: operator.Bash, Args: map[string]any{"bash_command": "exit 99"}},
	}}
	env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, reg, nil)

	wait.Until(t, 30*time.Second, "bash tries to finish", func() bool {
		return stateOf(t, env, "r1", "say") == core.TISuccess && stateOf(t, env, "r1", "fail") == core.TIUpForRetry &&
			stateOf(t, env, "r1", "skip") == core.TISkipped
	})
	x, err := env.Store.XComGet(context.Background(), "d", "r1", "say", -1, core.DefaultXComKey)
	if err != nil || string(x.Value) != `"world"` {
		t.Fatalf("say's return value = %v, %v", x, err)
	}

	// A second dag version adds a Go task that reads say's XCom; seeded in the same run id space.
	dag2 := core.DAG{DagID: "d", Params: map[string]any{"who": "params"}, Tasks: []core.Task{
		{TaskID: "say", Operator: operator.Bash, Args: map[string]any{"bash_command": "echo world", "do_xcom_push": true}},
		{TaskID: "greet", Operator: operator.Go, Args: map[string]any{"function": "greet"}},
	}}
	env.SeedRun(t, dag2, "r2", core.TIScheduled)
	sayTI, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r2", "say", -1)
	queue(t, env, sayTI.ID)
	wait.Until(t, 30*time.Second, "say in r2", func() bool { return stateOf(t, env, "r2", "say") == core.TISuccess })
	greetTI, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r2", "greet", -1)
	queue(t, env, greetTI.ID)
	wait.Until(t, 30*time.Second, "greet in r2", func() bool { return stateOf(t, env, "r2", "greet") == core.TISuccess })
	x, err = env.Store.XComGet(context.Background(), "d", "r2", "greet", -1, core.DefaultXComKey)
	if err != nil || string(x.Value) != `"hello world from conf"` {
		t.Fatalf("greet's return value = %v, %v", x, err)
	}

	// Logs were shipped to the api-server's folder.
	failTI, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "fail", -1)
	logText := readLog(t, env, failTI)
	if !strings.Contains(logText, "boom") || !strings.Contains(logText, "exit code 1") {
		t.Fatalf("fail's log = %q", logText)
	}
	sayR1, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "say", -1)
	if s := readLog(t, env, sayR1); !strings.Contains(s, "run r1\n") {
		t.Fatalf("say's log (rendered template) = %q", s)
	}
	if s := readLog(t, env, greetTI); !strings.Contains(s, "pulled") || !strings.Contains(s, "value=world") {
		t.Fatalf("greet's log = %q", s)
	}
}

func queue(t *testing.T, env *execapitest.Env, id string) {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{id}, To: core.TIQueued, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Notify(ctx, store.ChannelQueued); err != nil {
		t.Fatal(err)
	}
}

func readLog(t *testing.T, env *execapitest.Env, ti *core.TaskInstance) string {
	t.Helper()
	b, _, err := tasklog.Read(env.LogDir, tasklog.KeyOf(ti), 0)
	if err != nil {
		t.Fatalf("read log of %s: %v", ti.TaskID, err)
	}
	return string(b)
}

func sleeper(pidFile string) map[string]any {
	return map[string]any{"bash_command": fmt.Sprintf("sleep 300 & echo $! > %s; wait", pidFile)}
}

// TestWorkerShutdownKillsAndRetries: a try still running when its
// worker's shutdown grace ends is killed and retried at once without
// spending a retry (deployment.md's rolling restart): a task without
// retries, whose retry_delay is an hour, is up_for_retry now, with one
// try more.
func TestWorkerShutdownKillsAndRetries(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "long", Operator: operator.Bash, RetryDelay: core.Duration(time.Hour), Args: sleeper(pidFile)}}}
	env.SeedRun(t, dag, "r1", "")
	stop := startWorker(t, env, nil, func(w *Worker) { w.ShutdownGrace = 10 * time.Millisecond })
	var pid int
	wait.Until(t, 30*time.Second, "the task's child to start", func() bool { var ok bool; pid, ok = proctest.ReadPID(pidFile); return ok })
	stop()
	ti, err := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "long", -1)
	if err != nil {
		t.Fatal(err)
	}
	if ti.State != core.TIUpForRetry || ti.MaxTries != 2 || ti.NextRetryAt == nil || ti.NextRetryAt.After(env.Clock.Now()) {
		t.Fatalf("after shutdown: %s, max_tries %d, next retry at %v; want up_for_retry now, with a second try", ti.State, ti.MaxTries, ti.NextRetryAt)
	}
	wait.Until(t, 30*time.Second, "the child to die", func() bool { return !proctest.Alive(pid) })
	if s := readLog(t, env, ti); !strings.Contains(s, "worker shutting down") {
		t.Errorf("the try's log does not say the worker's shutdown ended it:\n%s", s)
	}
}

func TestWorkerTimeoutAndHeartbeatConflict(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	dir := t.TempDir()
	timeoutPID, hbPID := filepath.Join(dir, "timeout.pid"), filepath.Join(dir, "hb.pid")
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "slow", Operator: operator.Bash, ExecutionTimeout: core.Duration(200 * time.Millisecond), Args: sleeper(timeoutPID)},
		{TaskID: "orphan", Operator: operator.Bash, Args: sleeper(hbPID)},
	}}
	_, tis := env.SeedRun(t, dag, "r1", "")
	startWorker(t, env, nil, nil)

	wait.Until(t, 30*time.Second, "slow to time out", func() bool { return stateOf(t, env, "r1", "slow") == core.TIFailed })
	slow, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "slow", -1)
	if s := readLog(t, env, slow); !strings.Contains(s, operator.ErrTimeout.Error()) {
		t.Fatalf("slow's log = %q", s)
	}

	// Someone marks the running try failed: the next heartbeat's 409 kills it.
	var pid int
	wait.Until(t, 30*time.Second, "orphan's child", func() bool { var ok bool; pid, ok = proctest.ReadPID(hbPID); return ok })
	var orphan string
	for _, ti := range tis {
		if ti.TaskID == "orphan" {
			orphan = ti.ID
		}
	}
	moved, err := env.Store.TaskInstanceSetState(context.Background(), &store.TaskInstanceSetStateParams{IDs: []string{orphan}, To: core.TIFailed, Now: env.Clock.Now()})
	if err != nil || len(moved) != 1 {
		t.Fatalf("mark failed: %v %v", moved, err)
	}
	wait.Until(t, 30*time.Second, "orphan's child to be killed", func() bool { return !proctest.Alive(pid) })
	if got := env.TI(t, orphan).State; got != core.TIFailed {
		t.Fatalf("orphan is %s", got)
	}
	// Its log ends saying why: the worker's last lines reach the server
	// after the mark (store.LateLogGrace).
	wait.Until(t, 30*time.Second, "orphan's log to say the server stopped it", func() bool {
		return logSays(env, env.TI(t, orphan), "weir: the server stopped the try: it is no longer running")
	})
}

// logSays reports whether ti's log holds text (false while nothing of it
// was shipped yet).
func logSays(env *execapitest.Env, ti *core.TaskInstance, text string) bool {
	b, _, err := tasklog.Read(env.LogDir, tasklog.KeyOf(ti), 0)
	return err == nil && strings.Contains(string(b), text)
}

// Someone clears a running try: the next heartbeat's 409 kills it, and
// its log (the archived try's) ends saying why: the worker's last lines
// reach the server after the clear archived the try (store.LateLogGrace).
func TestWorkerClearedTryLogSaysWhy(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	_, tis := env.SeedRun(t, core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "long", Operator: operator.Bash, Args: sleeper(pidFile)}}}, "r1", "")
	startWorker(t, env, nil, nil)
	var pid int
	wait.Until(t, 30*time.Second, "the task's child", func() bool { var ok bool; pid, ok = proctest.ReadPID(pidFile); return ok })
	ctx := context.Background()
	if err := env.Store.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{ID: tis[0].ID, NewID: "cleared-next", To: core.TINone,
		Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, "the child to be killed", func() bool { return !proctest.Alive(pid) })
	wait.Until(t, 30*time.Second, "the cleared try's log to say the server stopped it", func() bool {
		archived, err := env.Store.TaskInstanceArchived(ctx, tis[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		return logSays(env, archived, "weir: the server stopped the try: it is no longer running")
	})
}

func TestWorkerRequiresIdentity(t *testing.T) {
	t.Parallel()
	err := (&Worker{}).Start(context.Background())
	if !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
}

// A worker prepared with a shell warmed for a bash try to come, then not
// started (`weir dags test` failing before its roles start), releases the
// shell, its records and its private folder on Close.
func TestAPreparedWorkerClosedUnstartedLeavesNothing(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	run := t.TempDir()
	w := &Worker{Client: env.WorkerClient(t, "w1"), WorkerID: "w1", RunDir: run, Clock: env.Clock}
	if err := w.Prepare(1); err != nil {
		t.Fatal(err)
	}
	groupStarted := regexp.MustCompile(`"group":\{"pid":(\d+)`)
	var pid int
	wait.Until(t, 30*time.Second, "the warmed shell's group in the ledger", func() bool {
		journals, _ := filepath.Glob(filepath.Join(run, "task-groups", "*.journal"))
		for _, j := range journals {
			b, _ := os.ReadFile(j)
			if m := groupStarted.FindSubmatch(b); m != nil {
				pid, _ = strconv.Atoi(string(m[1]))
			}
		}
		return pid != 0
	})
	if !proctest.Alive(pid) {
		t.Fatalf("the warmed shell %d is not running", pid)
	}
	w.Close()
	w.Close() // a second is a no-op
	if err := w.Start(t.Context()); err == nil {
		t.Error("Start after Close: want an error (a worker starts once)")
	}
	wait.Until(t, 30*time.Second, "the warmed shell to end", func() bool { return !proctest.Alive(pid) })
	for _, dir := range []string{"task-groups", "workers"} {
		if left, _ := os.ReadDir(filepath.Join(run, dir)); len(left) != 0 {
			t.Errorf("%s holds %v after Close", dir, left)
		}
	}
}

// A worker closed before it was prepared is never prepared: no records,
// no private folder.
func TestAWorkerClosedFirstIsNeverPrepared(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	run := t.TempDir()
	w := &Worker{Client: env.WorkerClient(t, "w1"), WorkerID: "w1", RunDir: run, Clock: env.Clock}
	w.Close()
	if err := w.Prepare(1); err == nil {
		t.Error("Prepare after Close: want an error")
	}
	if left, _ := os.ReadDir(run); len(left) != 0 {
		t.Errorf("the run folder holds %v", left)
	}
}

// A worker runs its bash tries in spare shells started ahead (from its
// third try on: the second has them made), and each in a shell of its
// own with NoSpareShells ([workers] spare_shells = false).
func TestWorkerRunsBashTriesInSpareShells(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{false, true} {
		env := execapitest.New(t, execapi.Config{})
		dag := core.DAG{DagID: "d", Tasks: []core.Task{
			{TaskID: "first", Operator: operator.Bash, Args: map[string]any{"bash_command": "true"}},
			{TaskID: "second", Operator: operator.Bash, Args: map[string]any{"bash_command": "sleep 0.5"}},
			{TaskID: "third", Operator: operator.Bash, Args: map[string]any{"bash_command": "echo third"}},
		}}
		env.SeedRun(t, dag, "r1", core.TIScheduled)
		stop := startWorker(t, env, nil, func(w *Worker) { w.NoSpareShells = off })
		for _, task := range []string{"first", "second", "third"} {
			ti, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", task, -1)
			queue(t, env, ti.ID)
			wait.Until(t, 30*time.Second, task+" to succeed", func() bool { return stateOf(t, env, "r1", task) == core.TISuccess })
		}
		stop()
		third, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "third", -1)
		s := readLog(t, env, third)
		if spared := strings.Contains(s, "bash started ahead (a spare shell)"); spared == off || !strings.Contains(s, "third\n") {
			t.Errorf("spare shells off: %v; the third try's log: %q", off, s)
		}
	}
}

// A task that finds its worker's credential (its environment no longer
// holds it, but a task runs as the worker's OS user) cannot print it into
// a log every viewer reads.
func TestWorkerCredentialIsMaskedInTaskLogs(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	found := filepath.Join(t.TempDir(), "found")
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "peek", Operator: operator.Bash, Args: map[string]any{"bash_command": "echo \"credential: $(cat " + found + ")\""}},
	}}
	env.SeedRun(t, dag, "r1", core.TIScheduled)
	var credential string
	startWorker(t, env, nil, func(w *Worker) { credential = w.Client.Token() })
	if err := os.WriteFile(found, []byte(credential), 0o600); err != nil {
		t.Fatal(err)
	}
	ti, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "peek", -1)
	queue(t, env, ti.ID)
	wait.Until(t, 30*time.Second, "peek to succeed", func() bool { return stateOf(t, env, "r1", "peek") == core.TISuccess })
	if s := readLog(t, env, ti); credential == "" || strings.Contains(s, credential) || !strings.Contains(s, "credential: ***\n") {
		t.Errorf("the try's log shows the worker's credential (%d bytes) unmasked or not at all:\n%s", len(credential), s)
	}
}
