package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/apiserver"
	"github.com/weirflow/weir/internal/callback"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/taskcli"
)

// dagsTestCmd runs one DAG run in-process, like `airflow dags test`.
func (a *app) dagsTestCmd() *cobra.Command {
	var conf string
	cmd := &cobra.Command{
		Use:   "test DAG_ID [LOGICAL_DATE]",
		Short: "Run one DAG run in this process, printing each task's log lines as it runs, then its task instances (exit 1 if it fails)",
		Long: `Records the DAG as its file defines it now, creates a run (running at once, whatever the DAG's
max_active_runs) and runs it in this process with a worker, a triggerer and a scheduler of its
own, which take no other run's work, until the run ends and the callbacks it fired (its tasks'
and, as it ends, the DAG's own) have run, printing the tries' and the callbacks' log lines as
they are written; then prints its task instances and its callbacks. Next to a running deployment on the same database (a standalone on the same home),
the deployment's workers and triggerers leave the test's tries, callbacks and triggers to it:
they run in this process, in this shell's environment, whatever queue a task names.

Ctrl-C (or SIGTERM), or the output's reader going away (| head), stops the running tries and
callbacks at once and marks the run failed, as marking a run failed by hand does: the tasks not
finished (a retry of a stopped try included) skipped; the callbacks the run fired that did not
run fail. A test killed outright (SIGKILL, a lost machine) leaves its run to the schedulers: the
next test of the DAG, or the deployment's scheduler, fails it (and its callbacks not run) once
the test's process has been silent for two heartbeats, so that its tasks no longer hold the
DAG's max_active_tasks and pool slots.

LOGICAL_DATE (2026-01-02, midnight UTC, or an RFC 3339 time) is the run's logical date, as airflow
dags test DAG DATE takes it, for the templates ({{ ds }}, ...); default now. Its data interval is
the one the DAG's timetable gives a manual run at that date, as in Airflow (a @daily DAG's: the
day before).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := testParams(args[0], args[1:], conf)
			if err != nil {
				return err
			}
			return a.runInProcess(cmd, p, nil)
		},
	}
	cmd.Flags().StringVar(&conf, "conf", "", "run configuration, a JSON object")
	return cmd
}

func (a *app) tasksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tasks", Short: "Work with single tasks"}
	var conf string
	test := &cobra.Command{
		Use:   "test DAG_ID TASK_ID [LOGICAL_DATE]",
		Short: "Run one task in this process, ignoring its upstreams (the other tasks are marked removed in a test run), printing its log lines",
		Long: `Runs one task as ` + "`weir dags test`" + ` runs a DAG (the same roles in this process, the same Ctrl-C), in a
run whose other tasks are marked removed, so that its upstreams count as done. The task runs
once, whatever its retries (as airflow tasks test runs it), and the test exits 1 if that try
fails. The callbacks the task fires run, and the test waits for them; the run's end fires none of
the DAG's own callbacks (as airflow tasks test ends no run). LOGICAL_DATE is as dags test's.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := testParams(args[0], args[2:], conf)
			if err != nil {
				return err
			}
			only := args[1]
			return a.runInProcess(cmd, p, &only)
		},
	}
	test.Flags().StringVar(&conf, "conf", "", "run configuration, a JSON object")
	cmd.AddCommand(localOnly(test), a.tasksListCmd(), a.tasksClearCmd(), a.taskLogsCmd(), a.statesForRunCmd(), a.tasksExpansionCmd())
	return cmd
}

// testParams are a test run's: its conf, a run id of now, and the logical
// date date[0] names (none: now). Its data interval is a manual run's
// (runs.NewRun.InferInterval).
func testParams(dagID string, date []string, conf string) (runs.TriggerParams, error) {
	p, err := triggerParams(dagID, "", conf)
	if err != nil {
		return p, err
	}
	p.RunID = runs.RunID("test", time.Now().UTC())
	if len(date) > 0 {
		if p.LogicalDate, err = parseDateFlag("LOGICAL_DATE", date[0]); err != nil {
			return p, err
		}
	}
	return p, nil
}

// runInProcess records the DAG from the DAG folder (only that one), creates a run (keeping only one task when
// only is set), runs an api-server serving only the Execution API, worker, triggerer (for tasks that defer or
// start from a trigger) and a scheduler confined to that run's DAG (paused
// or not; other DAGs are left alone) in this process until the run
// finishes, and prints the outcome.
func (a *app) runInProcess(cmd *cobra.Command, p runs.TriggerParams, only *string) error {
	ctx := cmd.Context()
	// A reader that goes away (`weir dags test … | head`) fails the next
	// write to stdout with EPIPE instead of killing the process, so that
	// the test still ends its run.
	brokenPipe := make(chan os.Signal, 1)
	signal.Notify(brokenPipe, syscall.SIGPIPE)
	defer signal.Stop(brokenPipe)
	restoreGC := startupGC()
	defer restoreGC()
	a.opts.onlyDagID = p.DagID // this process's scheduler and service run this DAG alone
	// One run's reads need no pool: each SQLite connection parses the whole
	// schema as it opens and keeps statements and pages of its own, and a
	// test opened four where one serves (docs/performance-history.md).
	a.opts.readConns = 1
	p.Running = true // as Airflow's dag.test(): no wait for a max_active_runs slot
	// The run records this process's api-server job row: a scheduler fails
	// the run should the process die before the run ends (job.Gone).
	p.TestJobID = uuid.NewString()
	if only != nil { // its run's end fires none of the DAG's own callbacks; its task runs once
		p.TestJobID = core.OneTaskTestPrefix + p.TestJobID
		p.SingleTry = true
	}
	cfg, st, logger, err := a.serverSetup(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	// Only this DAG is recorded: a test never deactivates the deployment's
	// other DAGs, whatever folder it reads.
	recorded, err := newProcessor(cfg, st, a.opts, logger).RecordOne(ctx, p.DagID)
	if errors.Is(err, core.ErrNotFound) {
		// A DAG recorded from a file of this folder was renamed or removed
		// since: its recorded version is not what the folder defines.
		d, derr := st.DagGet(ctx, p.DagID)
		if derr != nil || !d.IsActive || inFolder(d.FileLoc, cfg.Core.DagsFolder) {
			return err
		}
		logger.Info("running the deployment's recorded version of the dag", "dag_id", p.DagID, "fileloc", d.FileLoc)
	} else if err != nil {
		return err
	}
	// The worker is ready before the run is made: a bash task's shell
	// starts now, beside the run's creation and first scheduling, rather
	// than as its try begins (a DAG run from its recorded version, not
	// the folder's, starts none). Its client reaches the api-server made
	// for the run, below.
	// Its logs go where [logging] log_store keeps them, as standalone's
	// do (ADR 0046).
	w, err := newWorker(cfg, "", "test", "", a.opts, logger, writesLogFolder(cfg))
	if err != nil {
		return err
	}
	if err := w.Prepare(bashTries(recorded, only)); err != nil {
		return err
	}
	defer w.Close() // when Start did not run
	// The process's job row is written with its run, so no scheduler takes
	// the run for a gone test's while the roles start; with one task, the
	// others are removed in the same transaction, so no scheduler ever
	// sees them runnable.
	row := testJobRow(p.TestJobID, apiServerBeat(cfg))
	inRun := func(tx store.Store, run *core.DagRun) error {
		if err := tx.JobHeartbeat(ctx, row); err != nil {
			return err
		}
		if only != nil {
			return keepOnlyTask(ctx, tx, run, *only)
		}
		return nil
	}
	svc := newService(cfg, st, logger, a.opts)
	run, err := svc.TriggerRunWith(ctx, a.cliActor(), p, inRun)
	var noTask *noSuchTask
	switch {
	case errors.As(err, &noTask):
		return err
	case err != nil:
		return fmt.Errorf("%w (see `weir dags list-import-errors`)", err)
	}
	defer dropJobRows(ctx, st, logger) // after the run is ended
	var final *core.DagRun
	defer func() { endTest(ctx, svc, a.cliActor(), run, final != nil, logger) }()
	restoreGC()
	a.opts.onlyRunID = run.ID // its worker and triggerer take no work of another run
	cfg.API.Port = 0
	srv, err := newExecutionServer(cfg, st, a.opts, logger)
	if err != nil {
		return err
	}
	srv.JobID = p.TestJobID
	w.Client = w.Client.At(executionURLs(srv.URL())).Via(srv.InProcess()) // as standalone's: no loopback connection
	// Its worker takes every task of the run, whatever queue it names and
	// [workers] queues says, as dag.test() runs every task: no other
	// worker claims a test's tries.
	v, err := st.DagVersionGet(ctx, run.DagVersionID)
	if err != nil {
		return err
	}
	w.Queues = runs.Queues(&v.Spec)
	// Only its DAG's callbacks can fire in its run: a DAG that declares
	// none leaves the worker none to claim.
	hasCallbacks := callback.Declared(&v.Spec)
	w.NoCallbacks = !hasCallbacks
	// Ctrl-C stops the test's tries at once, as it stops Airflow's
	// dag.test(): no [workers] shutdown_grace_period for a run being watched.
	w.KillOnStop = true
	w.NoPreviousLife = true // the run is new: no earlier process claimed its tries
	sched := newSchedulerLoop(cfg, st, a.opts, logger)
	// The test prints its tries' lines from the log store its worker and
	// triggerer write.
	logStore, _, err := taskLogs(cfg, st)
	if err != nil {
		return err
	}
	tr := newTriggerer(cfg, st, a.opts, logger, logStore)
	// The first scheduling (the run's first tries queued) runs before the
	// roles start, alone on the machine, rather than beside their start-up
	// work: the worker's first claim then finds its try at once.
	if err := sched.Prime(ctx); err != nil {
		if ctx.Err() != nil {
			return err
		}
		logger.Error("scheduler pass failed; the scheduler retries as it starts", "err", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		// A service that fails (a worker that cannot start) ends the
		// wait for the run, with its error.
		err := runServices(runCtx, []runner{w}, []runner{srv, sched, tr})
		stop()
		done <- err
	}()
	logs := newLogStream(logStore, cmd.OutOrStdout())
	logs.callbacks = hasCallbacks
	say := func(line string) error { _, err := fmt.Fprintln(cmd.OutOrStdout(), line); return err }
	final, err = waitForRun(runCtx, st, run, func() error { return logs.Poll(runCtx, st, run.ID) }, say)
	stop()
	if serr := <-done; serr != nil {
		err = serr
	}
	if err != nil {
		return err
	}
	// The worker sends a try's last lines before it reports the state.
	if err := logs.PollAll(ctx, st, run.ID); err != nil {
		return err
	}
	cbs, err := logs.Callbacks(ctx, st, run.ID)
	if err != nil {
		return err
	}
	if err := logs.Flush(); err != nil {
		return err
	}
	return printRunOutcome(cmd, st, final, cbs)
}

// bashTries is how many bash tries the test of spec runs (only's task, or
// all of them): math.MaxInt when a mapped or iterating one makes it known
// only as it runs; 0 for a DAG the folder no longer defines (nil: run
// from its recorded version), whose worker warms no shell and makes
// spares as any worker does.
func bashTries(spec *core.DAG, only *string) int {
	if spec == nil {
		return 0
	}
	n := 0
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		switch {
		case t.Operator != operator.Bash || only != nil && t.TaskID != *only:
		case t.HasMapIndexes():
			return math.MaxInt // how many is known only as it expands
		default:
			n++
		}
	}
	return n
}

// inFolder says whether file is in folder (or below it), symbolic links
// resolved. A Go SDK DAG's location names no file: it is in none.
func inFolder(file, folder string) bool {
	folder, err := filepath.Abs(folder)
	if !filepath.IsAbs(file) || err != nil {
		return false
	}
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	rel, err := filepath.Rel(resolve(folder), filepath.Join(resolve(filepath.Dir(file)), filepath.Base(file)))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// testJobRow is the first heartbeat of a test's api-server, whose row is
// the test's (core.DagRun.TestJobID), written with the run.
func testJobRow(id string, every time.Duration) *core.Job {
	host, _ := os.Hostname()
	now := time.Now().UTC()
	return &core.Job{ID: id, Role: apiserver.Role, Hostname: host, PID: os.Getpid(), StartedAt: now, Heartbeat: now,
		Interval: every, Version: buildVersion()}
}

// dropJobRows deletes this process's job rows once its roles have stopped:
// a test's api-server, worker and triggerer were no deployment's, and each
// test would otherwise leave three rows for [core] job_retention, which
// every scheduler check and health listing reads. An interrupted test
// (Ctrl-C) deletes them too.
func dropJobRows(ctx context.Context, st store.Store, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	host, _ := os.Hostname()
	if _, err := st.JobDeleteOfProcess(ctx, host, os.Getpid()); err != nil {
		logger.Warn("this test's job rows stay until [core] job_retention ages them out", "err", err)
	}
}

// endTest ends the test's run as the test ends. Unless the run and its
// callbacks finished, the test was stopped (Ctrl-C, a role that could not
// start): the run is failed, as marking it failed would (its tries ran in
// this process, and it would otherwise stay running, its instances holding
// the DAG's max_active_tasks and pool slots), and the callbacks it fired
// that the test did not run fail (service.EndTestRun), which no deployment
// takes then.
func endTest(ctx context.Context, svc *service.Service, actor core.Actor, run *core.DagRun, finished bool, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	log := logger.With("dag_id", run.DagID, "run_id", run.RunID)
	if !finished {
		switch ended, err := svc.FailUnfinishedRun(ctx, actor, run.DagID, run.RunID); {
		case err != nil:
			log.Error("the test's run stays unfinished until a scheduler finds this process gone", "err", err)
			return
		case ended != nil:
			log.Warn("the test ended before its run: marked the run failed")
		}
	}
	switch n, err := svc.EndTestRun(ctx, run.ID); {
	case err != nil:
		log.Error("the test's run stays the test's until a scheduler finds this process gone", "err", err)
	case n > 0:
		log.Warn("the test ended before the callbacks its run fired: marked them failed", "callbacks", n)
	}
}

// startupGC makes the garbage collector wait for the heap to grow 4× (not
// 2×) until restore is called, unless GOGC (read by the Go runtime) is
// set. Start-up builds a live heap of a few MiB in one go: collecting it
// less often saves ~5 % of a one-task test's CPU, peak RSS unchanged
// (docs/performance-history.md); the run itself, which may be long, collects as
// usual.
func startupGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	return func() { debug.SetGCPercent(old) }
}

// keepOnlyTask marks every other task instance of the run removed, so the
// chosen task runs alone (removed upstreams count as successful).
func keepOnlyTask(ctx context.Context, st store.Store, run *core.DagRun, taskID string) error {
	tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		return err
	}
	var others []string
	found := false
	tasks := map[string]bool{}
	for _, ti := range tis {
		tasks[ti.TaskID] = true
		if ti.TaskID == taskID {
			found = true
		} else {
			others = append(others, ti.ID)
		}
	}
	if !found {
		return &noSuchTask{dagID: run.DagID, taskID: taskID, tasks: slices.Sorted(maps.Keys(tasks))}
	}
	_, err = st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: others, To: core.TIRemoved, Now: time.Now().UTC()})
	return err
}

// noSuchTask is `weir tasks test` naming a task its DAG lacks.
type noSuchTask struct {
	dagID, taskID string
	tasks         []string
}

// shownTasks is how many of its DAG's tasks a noSuchTask lists.
const shownTasks = 20

func (e *noSuchTask) Error() string {
	list := strings.Join(e.tasks[:min(len(e.tasks), shownTasks)], ", ")
	if len(e.tasks) > shownTasks {
		list += fmt.Sprintf(" and %d more (weir tasks list %s)", len(e.tasks)-shownTasks, e.dagID)
	}
	return fmt.Sprintf("dag %q has no task %q; its tasks: %s", e.dagID, e.taskID, list)
}

// unfinishedCallbacks are the states of a callback not run yet, or still
// running.
var unfinishedCallbacks = []core.CallbackState{core.CallbackQueued, core.CallbackRunning}

// eachEvery bounds how often waitForRun streams the logs: a chain of short
// tasks wakes it two or three times a step, and each poll lists instances
// and reads log files beside the run's own work (docs/performance-history.md);
// twenty times a second is as live as a reader needs.
const eachEvery = 50 * time.Millisecond

// waitForRun returns the run once it is finished and the callbacks it
// fired have ended (the test's worker runs them: ADR 0042), waking on
// scheduler notifications (with a poll as a fallback), checking the run at
// every wake-up and calling each (streaming the logs) at most every
// eachEvery; it says once (say) that it waits for the callbacks. A run
// cleared meanwhile is no test's any more (core.DagRun.TestJobID): it is
// returned with an error saying so.
func waitForRun(ctx context.Context, st store.Store, run *core.DagRun, each func() error, say func(string) error) (*core.DagRun, error) {
	wake := st.Subscribe(ctx, store.ChannelScheduler) // a run finished
	ended := st.Subscribe(ctx, store.ChannelTasks)    // a try ended
	queued := st.Subscribe(ctx, store.ChannelQueued)  // or ended and queued what follows it
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	due := time.NewTimer(0) // the next call of each
	defer due.Stop()
	var last time.Time
	waiting := false // for the callbacks, said
	// stopped says what ctx's end (Ctrl-C) left unfinished, whichever
	// call it interrupted: the run as it is now.
	stopped := func() error {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if r, err := st.DagRunGetByID(rctx, run.ID); err == nil && r.State.Terminal() {
			return fmt.Errorf("run %s of %s ended %s; the callbacks it fired did not: %w", run.RunID, run.DagID, r.State, ctx.Err())
		}
		return fmt.Errorf("run %s of %s did not finish: %w", run.RunID, run.DagID, ctx.Err())
	}
	poll := func() error {
		if err := each(); err != nil {
			if ctx.Err() != nil {
				return stopped()
			}
			return err
		}
		return nil
	}
	for {
		if wait := eachEvery - time.Since(last); wait <= 0 {
			if err := poll(); err != nil {
				return nil, err
			}
			last = time.Now()
		} else {
			due.Reset(wait)
		}
		r, err := st.DagRunGetByID(ctx, run.ID)
		if ctx.Err() != nil {
			return nil, stopped()
		}
		if err != nil {
			return nil, err
		}
		if r.TestJobID == "" {
			return r, fmt.Errorf("run %s of %s was cleared after it ended: it is the deployment's now, and the test stops",
				run.RunID, run.DagID)
		}
		var callbacks <-chan time.Time // the run's callbacks are running: no notification says when they end
		if r.State.Terminal() {
			n, err := st.CallbackCount(ctx, &store.CallbackListParams{DagRunID: run.ID, States: unfinishedCallbacks})
			if ctx.Err() != nil {
				return nil, stopped()
			}
			if err != nil {
				return nil, fmt.Errorf("count the callbacks run %s of %s fired: %w", run.RunID, run.DagID, err)
			}
			if n == 0 {
				return r, nil
			}
			if !waiting { // after the tasks' last lines; a reader gone (| head) fails this write: the test stops
				if err := poll(); err != nil {
					return nil, err
				}
				if err := say(fmt.Sprintf("run %s of %s %s; waiting for its %d callback(s) still to run", run.RunID, run.DagID, r.State, n)); err != nil {
					return nil, err
				}
				waiting = true
			}
			callbacks = time.After(eachEvery)
		}
		select {
		case <-ctx.Done():
			return nil, stopped()
		case <-callbacks:
		case <-wake:
		case <-ended:
		case <-queued:
		case <-due.C:
		case <-tick.C:
		}
	}
}

// printRunOutcome prints the run's task instances in dependency order
// (runs.DependencyOrder; map indexes in order), the callbacks it fired
// (cbs), and its state.
func printRunOutcome(cmd *cobra.Command, st store.Store, run *core.DagRun, cbs []core.Callback) error {
	tis, err := st.TaskInstanceList(cmd.Context(), &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		return err
	}
	if v, err := st.DagVersionGet(cmd.Context(), run.DagVersionID); err == nil {
		rank := map[string]int{}
		for i, id := range runs.DependencyOrder(&v.Spec) {
			rank[id] = i
		}
		sort.SliceStable(tis, func(i, j int) bool { return rank[tis[i].TaskID] < rank[tis[j].TaskID] })
	}
	rows := make([][]string, len(tis))
	for i, ti := range tis {
		rows[i] = []string{ti.TaskID, strconv.Itoa(ti.MapIndex), ti.State.String(), strconv.Itoa(ti.TryNumber), ti.Duration().Round(time.Millisecond).String()}
	}
	out := cmd.OutOrStdout()
	if err := table(out, []string{"TASK_ID", "MAP_INDEX", "STATE", "TRY", "DURATION"}, rows); err != nil {
		return err
	}
	if len(cbs) > 0 {
		rows = make([][]string, len(cbs))
		for i := range cbs {
			cb := &cbs[i]
			rows[i] = []string{firedBy(cb), string(cb.Event), string(cb.State), strconv.Itoa(cb.Attempts), cb.Error}
		}
		fmt.Fprintln(out)
		if err := table(out, []string{"CALLBACK_OF", "EVENT", "STATE", "ATTEMPTS", "ERROR"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nrun %s of %s: %s\n", run.RunID, run.DagID, run.State)
	if run.State != core.RunSuccess {
		return &taskcli.ExitError{Code: 1, Err: fmt.Errorf("run %s of %s %s", run.RunID, run.DagID, run.State)}
	}
	return nil
}
