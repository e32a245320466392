// Package worker claims queued task instances from the Execution API and
// runs them: shell, HTTP and SQL operators as subprocesses or calls, Go task
// functions in-process. Each try heartbeats on its own goroutine (a 409
// kills it), is killed at its execution_timeout, ships its log in chunks and
// reports its state; the server decides retries. The worker reaches the
// database only through the Execution API.
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/taskproc"
	"github.com/weirflow/weir/internal/trigger"
)

// errShutdown is the cause of a try killed because the worker stops.
var errShutdown = errors.New("worker shutting down")

// errClosed is Prepare's and Start's error after Close.
var errClosed = errors.New("worker: closed")

// Worker runs task tries. Set the fields, then call Start.
type Worker struct {
	Client      *execclient.Client // holds the worker credential
	Queues      []string           // empty = ["default"]
	Concurrency int                // task slots; 0 = 4
	Hostname    string             // "" = os.Hostname()
	WorkerID    string             // must equal the worker credential's subject
	// LogFolder, when set, is where task logs are written directly (the
	// worker shares the api-server's folder, as in standalone); when empty,
	// logs are shipped to the api-server over the Execution API.
	LogFolder         string
	Registry          *operator.Registry
	Triggers          *trigger.Registry // trigger types (sensors in poke mode, deferral checks)
	Connections       operator.ConnectionLookup
	HeartbeatInterval time.Duration // 0 = 5 s
	ShutdownGrace     time.Duration // running tries get this long after Start's ctx ends; 0 = 30 s
	ClaimWait         time.Duration // long-poll of one claim; 0 = 30 s
	KillGrace         time.Duration // SIGTERM → SIGKILL of a killed bash task; 0 = 5 s
	NoSpareShells     bool          // each bash try starts its own shell ([workers] spare_shells = false)
	// KillOnStop kills the running tries as soon as Start's ctx ends, with
	// no ShutdownGrace: `weir dags test`, whose Ctrl-C ends its run.
	KillOnStop bool
	// NoPreviousLife says that no earlier process claimed as this worker
	// what it may claim (`weir dags test`'s, whose run is its own): its
	// first claim does not look for a previous life's claims.
	NoPreviousLife bool
	Clock          core.Clock
	Logger         *slog.Logger
	// Version is the Weir version the worker tells in its heartbeats.
	Version string

	// CallbackSlots is how many fired callbacks run at once beside the
	// task slots ([callbacks] max_active); 0 = 4.
	CallbackSlots int
	// NoCallbacks: the worker claims no fired callbacks (a `weir dags
	// test` of a DAG that declares none, in whose run none can fire).
	NoCallbacks bool
	// CallbackTimeout kills a callback's command that runs longer
	// ([callbacks] timeout); 0 = 5 min.
	CallbackTimeout time.Duration

	// StateBackend is [workers] state_backend (or [state_store] backend):
	// an object-store URL, or the name of a custom backend in
	// StateBackends, where tasks keep task state values, only references
	// going to the database (docs/state-backends.md); "" = values in the
	// database. An unknown name stops Start with an error listing the
	// registered ones.
	StateBackend string
	// StateBackends are the program's custom backends by name
	// (weir.WithStateBackend).
	StateBackends stateref.Registry
	// StateSweepInterval is [workers] state_sweep_interval: how often the
	// worker deletes the objects of removed state (with StateBackend).
	StateSweepInterval time.Duration

	// RunDir is the folder of the worker's records ($WEIR_HOME/run): the
	// process groups of running bash tasks are recorded in its
	// task-groups folder, and Start first kills those a dead worker left
	// running; its workers folder holds each worker's private folder (tries'
	// tokens), which a dead worker's successor removes; "" = no records,
	// the private folder in the temporary directory.
	RunDir string

	runner       *operator.Runner
	logSpares    *tasklog.Spares // LogFolder's log folders made ahead of need
	tokenDir     string
	stateBackend *stateref.Backend // nil without StateBackend
	mine         held              // the tries this process holds
	// reclaim makes the next claim reclaim: a report that claimed the
	// next try was not answered (reclaimNow).
	reclaim atomic.Bool
	// cutClaim cuts the claim in flight short (nil between claims).
	cutClaim atomic.Pointer[context.CancelFunc]
	// stopClaiming ends the claim loop with the cause the worker exits
	// with (refuse); set by Start.
	stopClaiming context.CancelCauseFunc
	refusing     sync.Once
	gate         claimGate // a refusal heard while a claim is in flight waits for it
	processID    string    // this process's job row
	startedAt    time.Time
	prepared     sync.Once // init, by Prepare or Start
	initErr      error
	released     sync.Once // what init made, released by Close or Start's end
	closed       atomic.Bool
}

// Prepare readies the worker ahead of Start: its records, its private
// folder and, when bashTries bash tries are known to come (`weir dags
// test` of a DAG with bash tasks), a spare shell started now for the
// first, which a worker otherwise makes as its first bash try begins (ADR
// 0036); 0 = none known. Start prepares a worker not prepared yet; a
// caller that prepares one and then does not start it must Close it.
func (w *Worker) Prepare(bashTries int) error {
	w.prepared.Do(func() { w.initErr = w.init() })
	if w.closed.Load() {
		return errClosed
	}
	if w.initErr == nil {
		w.runner.WarmSpare(bashTries)
	}
	return w.initErr
}

// Close releases what Prepare made: the spare shells, the records and the
// private folder. Start does so as it returns; Close after Start, or
// without one, is safe. Prepare and Start fail after Close: a worker is
// started once.
func (w *Worker) Close() {
	w.closed.Store(true)
	w.prepared.Do(func() { w.initErr = errClosed })
	w.released.Do(func() {
		if w.runner == nil { // not prepared, or its init failed
			return
		}
		if w.logSpares != nil {
			w.logSpares.Close()
		}
		w.runner.Close()
		if g := w.runner.Groups; g != nil {
			g.Close() // after the runner's: its spare shells' groups end there
		}
		_ = os.RemoveAll(w.tokenDir)
	})
}

func (w *Worker) init() error {
	if w.Client == nil || w.WorkerID == "" {
		return fmt.Errorf("worker: Client and WorkerID are required: %w", core.ErrInvalid)
	}
	if w.Concurrency <= 0 {
		w.Concurrency = 4
	}
	if len(w.Queues) == 0 {
		w.Queues = []string{core.DefaultQueue}
	}
	if w.Hostname == "" {
		w.Hostname, _ = os.Hostname()
	}
	if w.HeartbeatInterval <= 0 {
		w.HeartbeatInterval = 5 * time.Second
	}
	if w.ShutdownGrace <= 0 {
		w.ShutdownGrace = 30 * time.Second
	}
	if w.ClaimWait <= 0 {
		w.ClaimWait = 30 * time.Second
	}
	if w.CallbackSlots <= 0 {
		w.CallbackSlots = 4
	}
	if w.CallbackTimeout <= 0 {
		w.CallbackTimeout = 5 * time.Minute
	}
	if w.Clock == nil {
		w.Clock = core.SystemClock{}
	}
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	if w.StateBackend != "" {
		b, err := stateref.Resolve(w.StateBackend, w.StateBackends)
		if err != nil {
			return fmt.Errorf("worker: [state_store] backend / [workers] state_backend: %w", err)
		}
		w.stateBackend = b
	}
	// Dead workers' leftover tasks are killed before their private folders
	// (tokens, the weir on their PATH) are removed.
	groups, err := w.killLeftovers()
	if err != nil {
		return err
	}
	dir, err := w.privateDir()
	if err != nil {
		if groups != nil {
			groups.Close()
		}
		return fmt.Errorf("worker: create token folder: %w", err)
	}
	pathDir, err := weirOnPath(dir)
	if err != nil {
		if groups != nil {
			groups.Close()
		}
		_ = os.RemoveAll(dir)
		return err
	}
	w.tokenDir = dir
	if w.LogFolder != "" {
		w.logSpares = tasklog.NewSpares(w.LogFolder)
	}
	w.processID, w.startedAt = uuid.NewString(), w.Clock.Now()
	w.runner = &operator.Runner{Registry: w.Registry, Connections: w.Connections, PathDir: pathDir,
		KillGrace: w.KillGrace, Groups: groups, DeferDir: w.tokenDir, Triggers: w.Triggers, SpareShell: !w.NoSpareShells}
	return nil
}

// killLeftovers kills the task process groups that dead workers sharing
// RunDir (this worker's previous life among them) left running, before any
// of their retries can start here, and opens this worker's records.
func (w *Worker) killLeftovers() (*taskproc.Ledger, error) {
	if w.RunDir == "" {
		return nil, nil
	}
	dir := w.groupDir()
	left, err := taskproc.KillLeftovers(dir)
	for _, g := range left {
		w.Logger.Warn("killed a task process group left running by a dead worker",
			"pgid", g.PGID, "worker_pid", g.WorkerPID, "pids", g.Killed)
	}
	if err != nil {
		w.Logger.Warn("kill leftover task processes", "err", err)
	}
	groups, err := taskproc.OpenLedger(dir)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	return groups, nil
}

// privateDir makes the worker's folder for its tries' tokens, its link to
// weir and bash tasks' deferral requests: in RunDir's workers folder, where
// the next worker started removes it if this one is killed (taskproc.OwnDir),
// or, without a RunDir, a temporary folder.
func (w *Worker) privateDir() (string, error) {
	if w.RunDir == "" {
		return os.MkdirTemp("", "weir-worker-")
	}
	return taskproc.OwnDir(filepath.Join(w.RunDir, "workers"))
}

// groupDir is the folder of the worker's task group and outcome records.
func (w *Worker) groupDir() string { return filepath.Join(w.RunDir, "task-groups") }

// weirOnPath makes a folder holding `weir`, a link to this worker's own
// executable, for the front of a bash task's PATH: the in-task CLI (`weir
// xcom push`) then works whatever the program is called (a Go SDK binary
// has its own name) and whatever weir is installed elsewhere. It is the
// file this process runs even once a new binary is installed at its path
// (placeOwnExecutable): the tasks of a worker that runs on through an
// upgrade's install keep the CLI that speaks its api-server's Execution
// API version.
func weirOnPath(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		return "", fmt.Errorf("worker: create bin folder: %w", err)
	}
	if err := placeOwnExecutable(filepath.Join(bin, "weir")); err != nil {
		return "", fmt.Errorf("worker: put weir into %s: %w", bin, err)
	}
	return bin, nil
}

// placeOwnExecutable puts at path the file this process runs: a link to
// /proc/<pid>/exe; in a process hidden from its tasks (taskproc.Hidden:
// `weir worker`, whose tasks may not follow that link) a hard link to its
// executable, or a copy of it where the two are on different file
// systems; elsewhere (no /proc) a link to its path.
func placeOwnExecutable(path string) error {
	proc := fmt.Sprintf("/proc/%d/exe", os.Getpid())
	if _, err := os.Stat(proc); err != nil {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		return os.Symlink(exe, path)
	}
	if !taskproc.Hidden() {
		return os.Symlink(proc, path)
	}
	if exe, err := os.Executable(); err == nil && os.Link(exe, path) == nil {
		return nil
	}
	return copyFile(proc, path)
}

// copyFile copies the file at from to a new executable file at to.
func copyFile(from, to string) (err error) {
	in, err := os.Open(from) //nolint:gosec // this process's own executable
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()                                     // read only
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700) //nolint:gosec // in the worker's private folder
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// Start claims and runs tries until ctx ends; then it stops claiming, gives
// running tries ShutdownGrace to finish (none with KillOnStop), kills the
// rest and reports them failed (the server turns that into up_for_retry
// while tries remain).
func (w *Worker) Start(ctx context.Context) error {
	if err := w.Prepare(0); err != nil {
		return err
	}
	defer w.Close()
	// The guard of the tasks' process groups starts beside the first claim
	// rather than in the first shell try's start. A process that cannot
	// start it (no /bin/sh) runs no shell task either: that try's start
	// says why.
	go func() {
		if err := taskproc.StartGuard(); err != nil {
			w.Logger.Debug("the task groups' guard did not start", "err", err)
		}
	}()
	// An api-server in this process is this binary: no version to compare.
	if !w.Client.InProcess() {
		if err := w.Client.Health(ctx); execclient.IsVersionMismatch(err) {
			return fmt.Errorf("worker: %w", err) // no retry helps: one side must be upgraded
		}
	}
	w.reportUnreported(ctx)
	w.Logger.Info("worker started", "worker_id", w.WorkerID, "queues", w.Queues, "slots", w.Concurrency)
	if w.stateBackend != nil {
		sw := &stateref.Sweeper{Client: w.Client, Store: w.stateBackend.Store, Logger: w.Logger, Interval: w.StateSweepInterval}
		go sw.Run(ctx)
	}

	taskCtx, killTasks := context.WithCancelCause(context.WithoutCancel(ctx))
	defer killTasks(errShutdown)
	slots := make(chan struct{}, w.Concurrency)
	var wg sync.WaitGroup
	// The claim loop runs until ctx ends or the api-server refuses the
	// worker (refuse: its credential, on a claim or a heartbeat, or its
	// name): no retry helps, the worker exits with the cause.
	loopCtx, stopLoop := context.WithCancelCause(ctx)
	defer stopLoop(nil)
	w.stopClaiming = stopLoop
	// The worker heartbeat outlives ctx until the last try ends (the
	// shutdown grace), so that no running try looks dead meanwhile.
	beatCtx, stopBeat := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBeat()
	go w.beat(beatCtx)
	// Callbacks are claimed by a loop of their own, so that busy task
	// slots never hold them back, nor they the tasks; it stops with the
	// task claims (a refused credential stops both).
	claimCtx, stopClaims := context.WithCancel(ctx)
	if !w.NoCallbacks {
		wg.Go(func() { w.claimCallbacks(claimCtx, taskCtx, &wg) })
	}
	// Reclaim: a claim whose answer was lost (its api-server died before
	// answering, the connection broke) comes back at the next claim rather
	// than after the heartbeat timeout released it, and so do the claims of
	// this worker's previous life. Only the first claim and one after a
	// failed claim can have lost an answer (the client's own retries of a
	// claim reclaim too): the others skip the look-up.
	reclaim := !w.NoPreviousLife
	// Tries hand their slots on (StateRequest.Next) while the loop claims.
	var stopped atomic.Bool
	claiming := func() bool { return loopCtx.Err() == nil && !stopped.Load() }
	for {
		free := acquire(loopCtx, slots)
		if free == 0 {
			break
		}
		if held := w.gate.begin(); held != nil {
			for range free {
				<-slots
			}
			w.refuse(held)
			break
		}
		// Start: the claimed tries start at once, saving each a run call.
		w.mine.claimSent()
		claimCtx, cut := context.WithCancel(loopCtx)
		w.cutClaim.Store(&cut)
		wls, err := w.Client.Claim(claimCtx, execclient.ClaimRequest{WorkerID: w.WorkerID, Hostname: w.Hostname,
			Queues: w.Queues, Limit: free, WaitSeconds: w.ClaimWait.Seconds(), Reclaim: w.reclaim.Swap(false) || reclaim, Holding: w.mine.list(),
			Start: w.runRequest()})
		w.cutClaim.Store(nil)
		held := w.gate.end()
		cutShort := claimCtx.Err() != nil && loopCtx.Err() == nil
		cut()
		reclaim = err != nil
		for range free - len(wls) {
			<-slots
		}
		if err != nil {
			w.mine.claimDone()
			if loopCtx.Err() != nil {
				break
			}
			if w.refuse(err) || (held != nil && w.refuse(held)) {
				break
			}
			if cutShort { // reclaimNow: the next claim reclaims, at once
				continue
			}
			w.Logger.Warn("claim workloads", "err", err)
			if !pause(loopCtx, time.Second) {
				break
			}
			continue
		}
		for _, wl := range wls {
			if !w.mine.add(&wl.TI) {
				w.Logger.Warn("a claimed try is held here already; it is not run twice", "dag_id", wl.TI.DagID,
					"run_id", wl.TI.RunID, "task_id", wl.TI.TaskID, "map_index", wl.TI.MapIndex, "try", wl.TI.TryNumber)
				<-slots
				continue
			}
			wg.Go(func() {
				defer func() { <-slots }()
				w.runSlot(taskCtx, wl, claiming)
			})
		}
		w.mine.claimDone()
		if held != nil && w.refuse(held) { // after starting what the claim brought: the server started it
			break
		}
	}

	stopped.Store(true)
	stopClaims()
	if running := w.mine.count(); ctx.Err() != nil && running > 0 && !w.KillOnStop {
		w.Logger.Info("stopping: claiming no more; waiting for the running tries", "worker_id", w.WorkerID,
			"running", running, "shutdown_grace", w.ShutdownGrace)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	grace := time.NewTimer(w.ShutdownGrace)
	defer grace.Stop()
	if w.KillOnStop {
		killTasks(errShutdown)
	}
	select {
	case <-done:
	case <-grace.C:
		w.Logger.Warn("shutdown grace over: killing running tries")
		killTasks(errShutdown)
		<-done
	}
	w.Logger.Info("worker stopped", "worker_id", w.WorkerID)
	if cause := context.Cause(loopCtx); ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
		return cause // refused by the api-server
	}
	return nil
}

// refuse stops the worker when err says the api-server refuses it for
// good, and reports whether it did: its credential (401: revoked,
// expired, signed with another key; on a claim or a heartbeat) or its
// name (403 wrong_worker: not its credential's; any other 403, a proxy's
// say, is retried). The claim loop ends and the worker
// exits with an error saying what to do.
func (w *Worker) refuse(err error) bool {
	var cause error
	switch {
	case errors.Is(err, core.ErrUnauthorized):
		cause = credentialRefused(w.WorkerID, err)
	case execclient.IsWrongWorker(err):
		cause = fmt.Errorf("worker %s: the api-server refuses this worker (%w); start it with the --name its credential "+
			"was issued for, or give it the credential of %s (`weir tokens create --worker %s`)", w.WorkerID, err, w.WorkerID, w.WorkerID)
	default:
		return false
	}
	w.refusing.Do(func() {
		w.Logger.Error("stopping: the api-server refuses this worker", "worker_id", w.WorkerID, "err", err)
		w.stopClaiming(cause)
	})
	return true
}

// claimGate keeps a refusal heard on a heartbeat while a claim is in
// flight until that claim returns: cutting it could lose an answer holding
// tries the server started, which would then be failed over, each spending
// a retry. With no claim in flight the refusal stops the loop at once (it
// may be waiting for a slot).
type claimGate struct {
	mu       sync.Mutex
	inFlight bool
	held     error
}

// begin marks a claim in flight, or returns the refusal held (no claim).
func (g *claimGate) begin() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		return g.held
	}
	g.inFlight = true
	return nil
}

// end marks the claim returned and returns a refusal held meanwhile.
func (g *claimGate) end() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight = false
	return g.held
}

// hold keeps err for the claim in flight, if one is, and says whether it did.
func (g *claimGate) hold(err error) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.inFlight {
		return false
	}
	if g.held == nil {
		g.held = err
	}
	return true
}

// credentialRefused is the error a worker exits with when the api-server
// refuses its credential (revoked, signed with a key the server does not
// hold, expired): retrying cannot help, a new credential can.
func credentialRefused(worker string, err error) error {
	return fmt.Errorf("worker %s: the api-server refused the worker credential (%w); issue a new one with "+
		"`weir tokens create --worker %s` and pass it with --token, or check that this machine and every api-server "+
		"share [api_auth] jwt_secret (docs/security.md#shared-keys-and-rotation)", worker, err, worker)
}

// acquire blocks for one free slot, then takes every other free one; it
// returns how many it took (0 when ctx ended).
func acquire(ctx context.Context, slots chan struct{}) int {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for {
		select {
		case slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
}

// pause waits d or until ctx ends; false when ctx ended.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
