package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/template"
)

// errNotRunning is the cause of a try killed because the server says it is
// no longer running (heartbeat 409).
var errNotRunning = errors.New("task instance is no longer running")

// reportTimeout bounds the final state report once the worker stops (its
// context ends); until then the report is tried until answered.
const reportTimeout = 30 * time.Second

// start moves a claimed try to running, trying again while no api-server
// answers: given up during an outage, the try would stay claimed and
// unstarted until the heartbeat timeout failed it and its retry ran.
func (w *Worker) start(ctx context.Context, tc *execclient.Client, tiID string, log *slog.Logger) (*execclient.RunContext, error) {
	for {
		rc, err := tc.Run(ctx, tiID, *w.runRequest())
		if err == nil || !unanswered(err) || ctx.Err() != nil {
			return rc, err
		}
		log.Warn("start try: the server did not answer; trying again", "err", err)
		if !pause(ctx, w.reportRetryWait()) {
			return nil, err
		}
	}
}

// runRequest says which process starts a try: this one.
func (w *Worker) runRequest() *execclient.RunRequest {
	return &execclient.RunRequest{Hostname: w.Hostname, PID: os.Getpid()}
}

// runSlot runs wl in one of the worker's slots, then each try the end of
// the one before hands the slot on to (execclient.StateRequest.Next) while
// claiming() says the worker takes work.
func (w *Worker) runSlot(ctx context.Context, wl execclient.Workload, claiming func() bool) {
	for handedOn := false; ; handedOn = true {
		next := w.runTry(ctx, wl, claiming)
		w.mine.remove(&wl.TI, handedOn)
		if next == nil {
			return
		}
		if !w.mine.add(&next.TI) {
			w.Logger.Warn("a try handed on by a report's answer is held here already; it is not run twice",
				"dag_id", next.TI.DagID, "run_id", next.TI.RunID, "task_id", next.TI.TaskID, "map_index", next.TI.MapIndex,
				"try", next.TI.TryNumber)
			return
		}
		wl = *next
	}
}

// runTry runs one claimed workload to its end and returns the try its
// report claimed next, if any (only when claiming() says so then).
func (w *Worker) runTry(ctx context.Context, wl execclient.Workload, claiming func() bool) *execclient.Workload {
	ti := wl.TI
	log := w.Logger.With("dag_id", ti.DagID, "run_id", ti.RunID, "task_id", ti.TaskID, "map_index", ti.MapIndex, "try", ti.TryNumber)
	id := execclient.TaskIdentity{TIID: ti.ID, DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex, TryNumber: ti.TryNumber}
	tc := w.Client.WithToken(wl.Token, id)
	rc := wl.Run // started by the claim
	if rc == nil {
		var err error
		if rc, err = w.start(ctx, tc, ti.ID, log); err != nil {
			log.Warn("could not start try", "err", err)
			return nil
		}
	}

	sink := newLogSink(ctx, w, tc, &rc.TI, rc.LogSize, log)
	red := operator.NewRedactor(sink, wl.Token, w.Client.Token()) // the worker's credential too, should a task find it
	// Only subprocesses read the token file (WEIR_TASK_TOKEN_FILE); in-process
	// operators use the client, whose token refreshes itself. The file is
	// written at the first refresh: until then the token in the
	// subprocesses' environment is current (execclient.ClientFromEnv), so
	// a try shorter than a token's refresh time writes no file.
	tokenFile, written := "", new(atomic.Bool)
	if usesTokenFile(wl.Task.Operator) {
		tokenFile = w.tokenFile(ti.ID)
		defer func() {
			if written.Load() {
				_ = os.Remove(tokenFile)
			}
		}()
	}
	tc.OnTokenRefresh(func(tok string) {
		red.Add(tok)
		if tokenFile != "" {
			w.writeTokenFile(tokenFile, tok, log)
			written.Store(true)
		}
	})

	tryCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if d := wl.Task.ExecutionTimeout.D(); d > 0 {
		var stop context.CancelFunc
		tryCtx, stop = context.WithTimeoutCause(tryCtx, d, operator.ErrTimeout)
		defer stop()
	}
	// The heartbeat stops with tryCtx; the try does not wait for it to
	// return (a beat cut short by the cancellation logs nothing).
	go w.heartbeat(tryCtx, tc, ti.ID, cancel, log)

	_, _ = fmt.Fprintf(red, "[%s] weir: %s try %d of %d on %s (worker %s)\n", w.Clock.Now().Format(time.RFC3339),
		ti.TaskID, ti.TryNumber, rc.MaxTries, w.Hostname, w.WorkerID)
	pending := w.pendingOutcome(wl, id, tc.Token(), log)
	state, err := w.execute(tryCtx, wl, rc, tc, red, tokenFile, pending.ExitTrap())
	pending.State, pending.NoRetry = string(state), state == core.TIFailed && operator.IsNoRetry(err)
	// A try its worker's shutdown killed (the grace over) is not the
	// task's failure: the server retries it without spending a retry.
	// A `dags test` stopped with Ctrl-C (KillOnStop) ends its run instead.
	pending.Interrupted = state == core.TIFailed && !pending.NoRetry && !w.KillOnStop && errors.Is(context.Cause(ctx), errShutdown)
	// A shell try's record exists since its start and now gets its state.
	// An in-process try is recorded only when its report is not answered
	// at once: a worker killed before that reports nothing, and the try
	// runs again (at least once), without a ledger write per try.
	recorded := false
	record := func() { pending, recorded = w.recordOutcome(pending, tc.Token(), log), true }
	if pending.ExitTo != "" {
		record()
	}
	defer func() {
		if recorded {
			w.forgetOutcome(pending)
		}
	}()
	sink.held = func(offset int64, tail []byte) {
		// The record now carries the log's tail too, for the next life.
		pending.LogOffset, pending.LogTail = offset, tail
		record()
	}
	cancel(nil)
	_ = red.EndLine() // the task's last line may lack its newline
	switch {
	case pending.Interrupted: // failed, but the server retries it at once, refunded
		_, _ = fmt.Fprintf(red, "[%s] weir: the worker's shutdown stopped the try (its shutdown_grace_period was over): it is retried at once, without spending a retry (%v)\n",
			w.Clock.Now().Format(time.RFC3339), err)
	case errors.Is(context.Cause(tryCtx), errNotRunning):
		_, _ = fmt.Fprintf(red, "[%s] weir: the server stopped the try: it is no longer running (marked or cleared)\n", w.Clock.Now().Format(time.RFC3339))
	case err != nil:
		_, _ = fmt.Fprintf(red, "[%s] weir: try ended %s: %v\n", w.Clock.Now().Format(time.RFC3339), state, err)
	default:
		_, _ = fmt.Fprintf(red, "[%s] weir: try ended %s\n", w.Clock.Now().Format(time.RFC3339), state)
	}
	_ = red.Flush()
	// The end of the log rides the final state report; a deferral's log is
	// closed before it is reported (a deferred try may resume at once, its
	// log going on from here), and a stopped try's is shipped as it is.
	var tail *execclient.LogTail
	if errors.As(err, new(*operator.DeferError)) || errors.Is(context.Cause(tryCtx), errNotRunning) {
		sink.Close()
	} else if tail = sink.closeForReport(); tail != nil {
		pending.LogOffset, pending.LogTail = tail.Offset, tail.Data // recorded with the outcome if unanswered
	}

	if errors.Is(context.Cause(tryCtx), errNotRunning) {
		log.Warn("try was stopped: the server says it is no longer running")
		return nil
	}
	if de := (*operator.DeferError)(nil); errors.As(err, &de) {
		refused := w.reportDeferral(ctx, tc, ti.ID, de, log)
		if refused == nil {
			return nil
		}
		// The server refused the trigger: the try fails, and its log,
		// closed before the report (a deferred try may resume at once),
		// says why.
		state, err = core.TIFailed, refused
		tail := newLogSink(ctx, w, tc, &rc.TI, sink.offset, log)
		_, _ = fmt.Fprintf(tail, "[%s] weir: the deferral was refused, so the try fails: %v\n", w.Clock.Now().Format(time.RFC3339), refused)
		tail.Close()
	}
	req := execclient.StateRequest{State: state, NoRetry: pending.NoRetry, Interrupted: pending.Interrupted, Log: tail}
	if claiming() {
		req.Next = &execclient.NextClaim{Queues: w.Queues, Start: *w.runRequest()}
	}
	sr, rerr := w.report(ctx, tc, ti.ID, req, claiming, log, record)
	if rerr != nil {
		log.Error("report try state", "state", state, "err", rerr)
		if unanswered(rerr) {
			recorded = false // the worker stops: its next life reports it
		}
		return nil
	}
	log.Info("try finished", "state", sr.State, "err", err)
	return sr.Next
}

// reportDeferral reports a try's deferral, until the server answers it as
// report does a final state: given up during an outage, the try would stay
// running on the server and its command would run again (its worker's
// reclaim, or its retry after the heartbeat timeout). It returns the
// server's refusal of the deferral itself (a bad or forbidden trigger: the
// try then fails), or nil.
func (w *Worker) reportDeferral(ctx context.Context, tc *execclient.Client, tiID string, de *operator.DeferError, log *slog.Logger) error {
	rctx, cancel := untilAnswered(ctx)
	defer cancel()
	for {
		_, err := tc.Defer(rctx, tiID, de.Deferral)
		switch {
		case err == nil:
			log.Info("try deferred: its slot is free until the trigger fires", "trigger", de.Deferral.Trigger.Type)
			return nil
		case errors.Is(err, core.ErrInvalid), errors.Is(err, core.ErrForbidden):
			log.Error("deferral refused: failing the try", "err", err)
			return err
		case unanswered(err) && rctx.Err() == nil:
			log.Warn("report deferral: the server did not answer; trying again", "err", err)
			if pause(rctx, w.reportRetryWait()) {
				continue
			}
		}
		// Answered otherwise (409: an earlier attempt deferred it, or the
		// try ended meanwhile), or the worker stopped: nothing more to do.
		log.Warn("report deferral", "err", err)
		return nil
	}
}

// execute renders the args, runs the operator and pushes the return value;
// it returns the state to report (deferred with an *operator.DeferError).
func (w *Worker) execute(ctx context.Context, wl execclient.Workload, rc *execclient.RunContext, tc *execclient.Client,
	red *operator.Redactor, tokenFile, exitTrap string) (core.TIState, error) {
	ti := rc.TI
	if ti.NextMethod == core.NextMethodFail {
		return deferralFailure(&wl.Task, ti.NextKwargs)
	}
	mapArgs := map[string]any{}
	if len(ti.MapArgs) > 0 {
		if err := json.Unmarshal(ti.MapArgs, &mapArgs); err != nil {
			return core.TIFailed, fmt.Errorf("decode map_args: %w", err)
		}
	}
	funcs := template.Funcs{Syntax: wl.Dag.TemplateSyntax, XComPull: func(taskID, key string) (any, error) {
		raw, err := tc.XComPull(ctx, taskID, key, execclient.AnyMapIndex)
		if err != nil {
			return nil, err
		}
		var v any
		return v, json.Unmarshal(raw, &v)
	}}
	tctx := template.WithEvents(template.Context(&rc.DagRun, &ti, wl.Dag.Params), rc.TriggeringAssetEvents, rc.TriggeringAssetEventsTotal)
	tctx, err := withVariables(ctx, tc, tctx, wl.Task.Args, red)
	if err != nil {
		return core.TIFailed, err
	}
	if template.ReadsPreviousSuccess(wl.Task.Args) { // fetched only for a task whose templates may read it
		prev, err := tc.PreviousSuccessfulDagRun(ctx, ti.ID)
		if err != nil {
			return core.TIFailed, fmt.Errorf("read the previous successful run (prev_*_success): %w", err)
		}
		tctx = template.WithPreviousSuccess(tctx, prev.DataIntervalStart, prev.DataIntervalEnd, prev.StartDate, prev.EndDate)
	}
	args, err := template.RenderArgs(wl.Task.Args, tctx, funcs)
	if err != nil {
		return core.TIFailed, fmt.Errorf("render arguments: %w", err)
	}
	if args == nil {
		args = map[string]any{}
	}
	maps.Copy(args, mapArgs)
	taskEnv := template.Env(tctx)
	w.sayEventsCut(red, rc, taskEnv)
	req := &operator.Request{TI: ti, Task: wl.Task, Args: args, Params: rc.Params, MapArgs: mapArgs,
		Env: append(append(execclient.TaskEnv(tc.BaseURLs(), tc.Token(), tokenFile, tc.Identity), tc.TLSEnv()...), taskEnv...), Log: red, Mask: red.Add, XCom: tc, Connections: tc,
		Resume: operator.ResumeOf(&ti), ExitTrap: exitTrap, AssetEvents: rc.TriggeringAssetEvents,
		PartitionKey: template.PartitionKey(&rc.DagRun)}
	if err := w.withStateBackend(req, tc, red); err != nil {
		return core.TIFailed, err
	}
	res, err := w.runner.Run(ctx, req)
	switch {
	case errors.As(err, new(*operator.DeferError)):
		return core.TIDeferred, err
	case errors.Is(err, operator.ErrSkipped):
		return core.TISkipped, nil
	case err != nil:
		return core.TIFailed, err
	}
	if res.ReturnValue != nil {
		k := execclient.XComKey{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex, Key: core.DefaultXComKey}
		if err := tc.XComSet(ctx, k, res.ReturnValue); err != nil {
			return core.TIFailed, fmt.Errorf("push return value: %w", err)
		}
	}
	return core.TISuccess, nil
}

// sayEventsCut writes in the try's log when its run consumed more asset
// events than the task's context holds (the first 1,000) or its
// environment does (none over 128 KiB), so that a script reading
// WEIR_TRIGGERING_ASSET_EVENTS alone does not pass over the rest unseen.
func (w *Worker) sayEventsCut(log io.Writer, rc *execclient.RunContext, env []string) {
	total, held := rc.TriggeringAssetEventsTotal, len(rc.TriggeringAssetEvents)
	inEnv := slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, template.EnvAssetEvents+"=") })
	if total == 0 || (total == held && inEnv) {
		return
	}
	what := fmt.Sprintf("the first %d", held)
	if !inEnv {
		what = "none of them (left out over 128 KiB)"
	}
	_, _ = fmt.Fprintf(log, "[%s] weir: this run consumed %d asset events; %s holds %s: `weir assets triggering-events` prints them all\n",
		w.Clock.Now().Format(time.RFC3339), total, template.EnvAssetEvents, what)
}

// heartbeat reports liveness every HeartbeatInterval until ctx ends; a 409
// kills the try.
func (w *Worker) heartbeat(ctx context.Context, tc *execclient.Client, tiID string, kill context.CancelCauseFunc, log *slog.Logger) {
	t := time.NewTicker(w.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := tc.Heartbeat(ctx, tiID, execclient.HeartbeatRequest{Hostname: w.Hostname, PID: os.Getpid()})
		if ctx.Err() != nil {
			return // the try ended meanwhile: a refusal now is its report's doing
		}
		switch {
		case errors.Is(err, core.ErrConflict):
			log.Warn("heartbeat refused: killing the try", "err", err)
			kill(errNotRunning)
			return
		case err != nil:
			log.Warn("heartbeat failed", "err", err)
		}
	}
}

// tokenFile is where a try's subprocesses read its current token
// (WEIR_TASK_TOKEN_FILE) once it has been refreshed.
func (w *Worker) tokenFile(tiID string) string { return filepath.Join(w.tokenDir, tiID+".token") }

// writeTokenFile keeps the try's current token at p, so long tasks keep
// API access after a refresh.
func (w *Worker) writeTokenFile(p, token string, log *slog.Logger) {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(token), 0o600); err != nil {
		log.Warn("write token file", "err", err)
		return
	}
	if err := os.Rename(tmp, p); err != nil {
		log.Warn("write token file", "err", err)
	}
}

// usesTokenFile reports whether an operator starts subprocesses that read
// the try's token from WEIR_TASK_TOKEN_FILE.
func usesTokenFile(op string) bool { return op == "bash" }

// deferralFailure is how a try resumed into a failure ends (its trigger
// failed or timed out), with the message the triggerer or scheduler
// recorded in next_kwargs: failed, retries following, but a sensor's
// timeout (operator.SensorTimedOut).
func deferralFailure(task *core.Task, kwargs json.RawMessage) (core.TIState, error) {
	var f core.DeferralFailure
	if err := json.Unmarshal(kwargs, &f); err != nil || f.Error == "" {
		return core.TIFailed, errors.New("the deferral failed")
	}
	if f.SensorTimeout {
		return operator.SensorTimedOut(task, errors.New(f.Error))
	}
	return core.TIFailed, errors.New(f.Error)
}
