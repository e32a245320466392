package worker

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// held is the set of tries the worker holds (claimed, from the answer to a
// claim, until their run ends). Each claim lists them, so that the server
// returns only the worker's claims whose answer was lost.
//
// A try handed on by a report (StateRequest.Next) begins outside the
// claim loop, so a claim sent before it began does not list it: a reclaim
// then in flight (sent after a failure) may return it, running, after its
// run ended. While claims are in flight, the ends of handed-on tries are
// remembered (ended) so that such an answer does not run them again. A
// run is told by the try's id and the time it was queued: a try that
// deferred keeps its id, and its resumption, queued again, is a new run.
type held struct {
	mu     sync.Mutex
	ids    map[string]int64    // the held runs: id → queued_at (tryRun)
	claims int                 // claims in flight (claimSent, claimDone)
	ended  map[tryRun]struct{} // runs of handed-on tries ended while claims were in flight
}

// tryRun is one run of a try: a deferred try resumes under its id, queued
// again (the time in microseconds, as stored).
type tryRun struct {
	id       string
	queuedAt int64
}

func runOf(ti *core.TaskInstance) tryRun {
	r := tryRun{id: ti.ID}
	if ti.QueuedAt != nil {
		r.queuedAt = ti.QueuedAt.UnixMicro()
	}
	return r
}

// add records a run of a try as held; false when it already was, or ended
// here meanwhile (a claim answer repeated a try: the caller must not run
// it twice). A try's next run (resumed after a deferral) is taken even
// while the run that deferred is still winding down.
func (h *held) add(ti *core.TaskInstance) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[string]int64{}
	}
	run := runOf(ti)
	if q, ok := h.ids[run.id]; ok && q == run.queuedAt {
		return false
	}
	if _, ok := h.ended[run]; ok {
		return false
	}
	h.ids[run.id] = run.queuedAt
	return true
}

// remove forgets a run of a try that ended (not the try's next run, which
// may have been added meanwhile); handedOn says it began from a report's
// hand-on.
func (h *held) remove(ti *core.TaskInstance, handedOn bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	run := runOf(ti)
	if q, ok := h.ids[run.id]; ok && q == run.queuedAt {
		delete(h.ids, run.id)
	}
	if handedOn && h.claims > 0 {
		if h.ended == nil {
			h.ended = map[tryRun]struct{}{}
		}
		h.ended[run] = struct{}{}
	}
}

// claimSent notes a claim in flight, until claimDone once its answer's
// tries are added.
func (h *held) claimSent() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.claims++
}

// claimDone ends claimSent; with no claim left in flight, no answer can
// repeat an ended try.
func (h *held) claimDone() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.claims--; h.claims == 0 {
		h.ended = nil
	}
}

// count returns how many tries are held.
func (h *held) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ids)
}

// Slots returns the worker's task slots ([workers] concurrency) and how
// many of them hold a try now (claimed, until its run ends): the
// process's worker gauges, read at each scrape.
func (w *Worker) Slots() (total, running int) {
	return w.Concurrency, w.mine.count()
}

// list returns the held tries' ids, sorted.
func (h *held) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.ids))
	for id := range h.ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// beat sends the worker heartbeat every HeartbeatInterval until ctx ends:
// this process's job row and the tries it holds. The scheduler fails a
// worker's tries over once its heartbeats stop for two intervals
// (docs/state-machines.md#dead-workers); a failed beat is logged and tried
// again within a second (reportRetryWait) when the server did not answer,
// not a whole interval later, so one lost beat never brings a live worker
// near that limit.
func (w *Worker) beat(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := w.Client.WorkerHeartbeat(ctx, execclient.WorkerHeartbeatRequest{WorkerID: w.WorkerID, ProcessID: w.processID,
			Hostname: w.Hostname, PID: os.Getpid(), StartedAt: w.startedAt, IntervalSeconds: w.HeartbeatInterval.Seconds(),
			Holding: w.mine.list(), Version: w.Version})
		next := w.HeartbeatInterval
		if err != nil && ctx.Err() == nil && errors.Is(err, core.ErrUnauthorized) {
			// Revoked or expired: the claims stop now, or once the claim in
			// flight returns (the server refuses it within 2 s).
			if !w.gate.hold(err) {
				w.refuse(err)
			}
		} else if err != nil && ctx.Err() == nil {
			w.Logger.Warn("worker heartbeat", "err", err)
			if unanswered(err) {
				next = w.reportRetryWait()
			}
		}
		t.Reset(next)
	}
}
