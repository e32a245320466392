package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/callback"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/template"
)

// claimCallbacks claims fired callbacks into CallbackSlots until ctx ends
// and runs each (on runCtx, which outlives ctx by the shutdown grace, as
// tries do) in wg.
func (w *Worker) claimCallbacks(ctx, runCtx context.Context, wg *sync.WaitGroup) {
	slots := make(chan struct{}, w.CallbackSlots)
	for {
		free := acquire(ctx, slots)
		if free == 0 {
			return
		}
		res, err := w.Client.ClaimAll(ctx, execclient.ClaimRequest{WorkerID: w.WorkerID, Hostname: w.Hostname,
			Queues: w.Queues, CallbackLimit: free, WaitSeconds: w.ClaimWait.Seconds()})
		var cbs []execclient.CallbackWorkload
		if err == nil {
			cbs = res.Callbacks
		}
		for range free - len(cbs) {
			<-slots
		}
		for _, cw := range cbs {
			wg.Go(func() {
				defer func() { <-slots }()
				w.runCallback(runCtx, cw)
			})
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, core.ErrInvalid) {
				// An api-server that predates callbacks refuses limit 0.
				w.Logger.Warn("the api-server does not hand out callbacks: this worker runs none", "err", err)
				return
			}
			w.Logger.Warn("claim callbacks", "err", err)
			if !pause(ctx, time.Second) {
				return
			}
		}
	}
}

// runCallback runs one claimed attempt of a fired callback to its end
// (docs/emission.md#callbacks): its command in a process group of its own,
// as a bash task's, killed at CallbackTimeout or when the server says the
// attempt no longer runs; its log shipped beside the run's as it is
// written, as a try's; its end reported. A failure is the callback's alone: the state change that fired
// it was committed before.
func (w *Worker) runCallback(ctx context.Context, cw execclient.CallbackWorkload) {
	cb := cw.Callback
	log := w.Logger.With("dag_id", cb.DagID, "run_id", cb.RunID, "task_id", cb.TaskID, "map_index", cb.MapIndex,
		"try", cb.TryNumber, "callback_id", cb.ID, "event", cb.Event, "attempt", cb.Attempts)
	cc := w.Client.WithToken(cw.Token, execclient.TaskIdentity{DagID: cb.DagID, RunID: cb.RunID, TaskID: cb.TaskID, MapIndex: cb.MapIndex})

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	runCtx, stop := context.WithTimeoutCause(runCtx, w.CallbackTimeout, operator.ErrTimeout)
	defer stop()
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); w.callbackHeartbeat(runCtx, cc, cb.ID, cancel, log) }()

	sink := newCallbackLogSink(ctx, w, cc, &cb, log)
	red := operator.NewRedactor(sink, cw.Token, w.Client.Token())
	_, _ = fmt.Fprintf(red, "[%s] weir: callback %d, %s of %s, attempt %d on %s (worker %s)\n", w.Clock.Now().Format(time.RFC3339),
		cb.ID, cb.Event, owner(&cb), cb.Attempts, w.Hostname, w.WorkerID)
	err := w.execCallback(runCtx, cw, cc, red)
	cancel(nil)
	<-hbDone
	if errors.Is(context.Cause(runCtx), errNotRunning) {
		_ = red.Flush()
		sink.Close() // refused from now on, as the attempt is another's: what is left is dropped
		log.Warn("callback was stopped: the server says its attempt no longer runs")
		return
	}
	report := execclient.CallbackReport{State: core.CallbackSuccess}
	if err != nil {
		report = execclient.CallbackReport{State: core.CallbackFailed, Error: err.Error()}
		_, _ = fmt.Fprintf(red, "[%s] weir: callback failed: %v\n", w.Clock.Now().Format(time.RFC3339), err)
	} else {
		_, _ = fmt.Fprintf(red, "[%s] weir: callback succeeded\n", w.Clock.Now().Format(time.RFC3339))
	}
	_ = red.Flush()
	sink.Close() // the log's last lines before the end, which readers take as the log's end
	rctx, rcancel := untilAnswered(ctx)
	defer rcancel()
	for {
		rerr := cc.CallbackFinish(rctx, cb.ID, report)
		if rerr == nil {
			log.Info("callback finished", "state", report.State, "err", err)
			return
		}
		if !unanswered(rerr) || !pause(rctx, w.reportRetryWait()) {
			log.Error("report callback", "state", report.State, "err", rerr)
			return
		}
	}
}

// execCallback runs the callback: a Go callback's function in this
// process, a notifier, or its command rendered over the run's context and
// .callback.
func (w *Worker) execCallback(ctx context.Context, cw execclient.CallbackWorkload, cc *execclient.Client, red *operator.Redactor) error {
	cb := &cw.Callback
	tctx := callback.TemplateContext(&cw.DagRun, cw.Params, cb)
	if cb.Spec.Function != "" {
		return w.runner.RunCallback(ctx, cb.Spec.Function, operator.CallbackContext{Callback: *cb, Run: cw.DagRun, Params: cw.Params,
			Logger: slog.New(slog.NewTextHandler(red, nil)).With("dag_id", cb.DagID, "run_id", cb.RunID, "callback_id", cb.ID, "event", cb.Event),
			Log:    red, Emitter: &execclient.CallbackEmitter{Client: cc, ID: cb.ID}})
	}
	switch cb.Spec.Notifier {
	case core.NotifierWebhook:
		return w.webhook(ctx, cw, cc, red)
	case core.NotifierAssetEvent:
		return emitNotifierEvent(ctx, cw, cc, tctx, red)
	}
	command, err := template.Render(cb.Spec.Command, tctx, template.Funcs{Syntax: cb.Spec.TemplateSyntax})
	if err != nil {
		return fmt.Errorf("render the callback's command: %w", err)
	}
	req := &operator.Request{
		TI:   core.TaskInstance{ID: "callback-" + strconv.FormatInt(cb.ID, 10), DagID: cb.DagID, RunID: cb.RunID, TaskID: cb.TaskID, MapIndex: cb.MapIndex, TryNumber: cb.Attempts},
		Task: core.Task{TaskID: cb.TaskID, Operator: "bash"}, Args: map[string]any{"bash_command": command},
		Params: cw.Params, Env: append(callback.Env(cb), template.Env(tctx)...), Log: red, Mask: red.Add,
	}
	_, err = w.runner.Run(ctx, req)
	return err
}

// callbackHeartbeat tells the server the attempt is alive every
// HeartbeatInterval until ctx ends; a 409 stops it.
func (w *Worker) callbackHeartbeat(ctx context.Context, cc *execclient.Client, id int64, kill context.CancelCauseFunc, log *slog.Logger) {
	t := time.NewTicker(w.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := cc.CallbackHeartbeat(ctx, id)
		switch {
		case errors.Is(err, core.ErrConflict):
			kill(errNotRunning)
			return
		case err != nil && ctx.Err() == nil:
			log.Warn("callback heartbeat failed", "err", err)
		}
	}
}

// owner names what a callback belongs to, for its log.
func owner(cb *core.Callback) string {
	if cb.Level == core.CallbackDag {
		return "dag run " + cb.DagID + "/" + cb.RunID
	}
	s := fmt.Sprintf("%s/%s/%s try %d", cb.DagID, cb.RunID, cb.TaskID, cb.TryNumber)
	if cb.MapIndex >= 0 {
		s += fmt.Sprintf(" map_index %d", cb.MapIndex)
	}
	return s
}
