package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/taskproc"
)

// report sends a try's final state req (with the end of its log and the
// claim of the next try, when it carries them; the claim only while
// claiming() says the worker takes work, and never after an unanswered
// attempt) until the server answers it. A report given up during an
// outage of the API server (or of its database) would leave the try
// running on the server, unreported, until its heartbeat timeout failed
// it and its retry ran the command a second time. Once ctx ends (the worker stops), report
// gives up after reportTimeout. onUnanswered, if set, is called once when
// the first attempt goes unanswered (the worker then records the outcome,
// with the tail, for its next life).
func (w *Worker) report(ctx context.Context, tc *execclient.Client, tiID string, req execclient.StateRequest,
	claiming func() bool, log *slog.Logger, onUnanswered func()) (*execclient.StateResponse, error) {
	rctx, cancel := untilAnswered(ctx)
	defer cancel()
	for {
		if req.Next != nil && !claiming() {
			req.Next = nil // the worker stopped claiming meanwhile
		}
		sr, err := tc.Finish(rctx, tiID, req)
		if err == nil && req.Log != nil && sr.LogNextOffset == nil {
			log.Warn("the api-server has no log store: the end of the task log is lost", "bytes", len(req.Log.Data))
		}
		if err != nil && req.Next != nil {
			// An attempt may have claimed a try whose answer is lost.
			w.reclaimNow()
			if errors.Is(err, core.ErrUnauthorized) || errors.Is(err, core.ErrForbidden) {
				// The worker's credential was refused: the end goes alone
				// (the claim loop stops on the refusal).
				log.Warn("report try state: the claim of the next try was refused; reporting without it", "err", err)
				req.Next = nil
				continue
			}
		}
		if _, gap := execclient.LogGap(err); gap {
			// The stored log is shorter than this worker shipped: the log
			// sink goes on from its end (safe to repeat), then the state
			// goes alone.
			sink := newLogSink(ctx, w, tc, &core.TaskInstance{ID: tiID}, req.Log.Offset, log)
			_, _ = sink.Write(req.Log.Data)
			sink.Close()
			req.Log = nil
			continue
		}
		if err == nil || !unanswered(err) || rctx.Err() != nil {
			return sr, err
		}
		if onUnanswered != nil {
			onUnanswered()
			onUnanswered = nil
		}
		// Sent again, it could only find the try ended by an attempt that
		// also claimed (the next claim reclaims that), or end it now.
		req.Next = nil
		if ctx.Err() != nil { // the worker stops: say what it waits for
			log.Warn("stopping: the end of a try is not reported yet; the worker waits for an api-server to answer it "+
				"(a try's end is not dropped: the outcome is kept for the worker's next start after this wait)",
				"state", req.State, "wait_at_most", reportTimeout, "err", err)
		} else {
			log.Warn("report try state: the server did not answer; trying again", "state", req.State, "err", err)
		}
		if !pause(rctx, w.reportRetryWait()) {
			return nil, err
		}
	}
}

// untilAnswered returns the context of a delivery that must outlast an
// outage (a try's final state, its log's tail): it does not end with ctx
// but reportTimeout after ctx ends (the worker stops).
func untilAnswered(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(reportTimeout, cancel) })
	return rctx, func() { stop(); cancel() }
}

// reportRetryWait is the pause between two reports of one state.
func (w *Worker) reportRetryWait() time.Duration { return min(w.HeartbeatInterval, time.Second) }

// unanswered reports whether a request failed without an answer from the
// server: a transport error or a 5xx (the client retried it already).
func unanswered(err error) bool {
	var e *execclient.Error
	if errors.As(err, &e) {
		return e.Status >= 500
	}
	return true
}

// pendingOutcome records, before a bash task starts, that its try runs
// (taskproc.Outcome: its shell leaves its exit status in the ledger), and
// returns the outcome to complete. Other operators run inside the worker
// and have nothing to record until they end.
func (w *Worker) pendingOutcome(wl execclient.Workload, id execclient.TaskIdentity, token string, log *slog.Logger) taskproc.Outcome {
	o := taskproc.Outcome{TIID: id.TIID, TryNumber: id.TryNumber}
	if w.runner.Groups == nil || wl.Task.Operator != operator.Bash {
		return o
	}
	return w.recordOutcome(o, token, log)
}

// recordOutcome records how a try ended before it is reported, so that the
// worker's next life can report it if this one dies first, and returns it
// as recorded, to forget once the report is answered. Without a run
// folder there is nothing to record.
func (w *Worker) recordOutcome(o taskproc.Outcome, token string, log *slog.Logger) taskproc.Outcome {
	if w.runner.Groups == nil {
		return o
	}
	o.Token = token
	recorded, err := w.runner.Groups.Record(o)
	if err != nil {
		log.Warn("record the try's outcome before reporting it", "err", err)
	}
	return recorded
}

// forgetOutcome forgets a recorded outcome once its report is answered.
func (w *Worker) forgetOutcome(o taskproc.Outcome) {
	if w.runner.Groups != nil {
		w.runner.Groups.Forget(o)
	}
}

// reportUnreported reports the outcomes of tries that dead workers sharing
// RunDir (this worker's previous life among them) recorded but did not
// report, before claiming any work, after the tail of the try's log they
// could not ship: a try whose command finished is
// reported finished, not run again. A try the server has failed meanwhile
// (its heartbeat timeout passed) answers 409 and is left to its retry.
func (w *Worker) reportUnreported(ctx context.Context) {
	if w.runner.Groups == nil {
		return
	}
	outs, err := w.runner.Groups.Unreported()
	if err != nil {
		w.Logger.Warn("read unreported try outcomes", "err", err)
	}
	for _, o := range outs {
		log := w.Logger.With("ti_id", o.TIID, "try", o.TryNumber, "state", o.State)
		tc := w.Client.WithToken(o.Token, execclient.TaskIdentity{TIID: o.TIID, TryNumber: o.TryNumber})
		if len(o.LogTail) > 0 && w.LogFolder == "" {
			tail := newLogSink(ctx, w, tc, &core.TaskInstance{ID: o.TIID}, o.LogOffset, log)
			_, _ = tail.Write(o.LogTail)
			tail.Close()
		}
		sr, err := w.report(ctx, tc, o.TIID, execclient.StateRequest{State: core.TIState(o.State), NoRetry: o.NoRetry, Interrupted: o.Interrupted}, nil, log, nil)
		switch {
		case err == nil:
			log.Info("reported the outcome of a try its dead worker had not reported", "now", sr.State)
		case unanswered(err):
			log.Warn("could not report the outcome of a dead worker's try; the next start tries again", "err", err)
			continue
		default:
			log.Warn("the server refused the outcome of a dead worker's try", "err", err)
		}
		w.forgetOutcome(o)
	}
}

// reclaimNow makes the next claim reclaim and cuts the claim in flight
// short: a long poll would hold the reclaim back up to ClaimWait, longer
// than the heartbeat timeout after which the lost try is failed over.
func (w *Worker) reclaimNow() {
	w.reclaim.Store(true)
	if cut := w.cutClaim.Load(); cut != nil {
		(*cut)()
	}
}
