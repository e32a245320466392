package execapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store"
)

// ownWorker defaults a request's worker_id to the worker credential's
// subject and refuses any other (403).
func ownWorker(workerID *string, c *auth.Claims) error {
	if *workerID == "" {
		*workerID = c.Subject
	}
	if *workerID != c.Subject {
		return withStatus(http.StatusForbidden, execclient.ReasonWrongWorker,
			fmt.Errorf("worker_id %q does not match the worker credential's subject %q: %w", *workerID, c.Subject, core.ErrForbidden))
	}
	return nil
}

// maxHolding bounds the tries a claim says its worker holds.
const maxHolding = 10000

// claim serves POST /execution/workloads/claim: it claims up to limit queued
// task instances for the worker, long-polling (woken by ChannelQueued, and by
// ChannelCallbacks when it claims callbacks too, and every ClaimRecheck;
// never a busy loop) until one is available or wait_seconds pass. With
// reclaim, the worker's own unstarted claims it does not list as holding
// come first (docs/state-machines.md#dead-workers). A poll hands out
// nothing it would not hand a new request (stillWaiting): a credential
// revoked or expired meanwhile ends it with 401 (checked too every
// auth.DefaultRevocationTTL while nothing wakes it), a worker gone silent
// meanwhile with an empty answer.
func (s *server) claim(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	var req execclient.ClaimRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	if err := ownWorker(&req.WorkerID, c); err != nil {
		return err
	}
	if req.CallbackLimit < 0 {
		return fmt.Errorf("callback_limit must not be negative: %w", core.ErrInvalid)
	}
	// A worker whose task slots are all busy claims callbacks alone (limit 0).
	if req.Limit < 0 || req.Limit > s.cfg.MaxClaimBatch || (req.Limit == 0 && req.CallbackLimit == 0) {
		return fmt.Errorf("limit must be between 1 and %d (0 with a callback_limit), got %d: %w", s.cfg.MaxClaimBatch, req.Limit, core.ErrInvalid)
	}
	if len(req.Holding) > maxHolding {
		return fmt.Errorf("holding lists %d tries, at most %d are allowed: %w", len(req.Holding), maxHolding, core.ErrInvalid)
	}
	if req.WaitSeconds < 0 {
		return fmt.Errorf("wait_seconds must not be negative: %w", core.ErrInvalid)
	}
	if len(req.Queues) == 0 {
		req.Queues = []string{core.DefaultQueue}
	}
	wait := min(time.Duration(req.WaitSeconds*float64(time.Second)), s.cfg.MaxClaimWait)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// Subscribe before the first attempt so that a notify between the
	// attempt and the wait is not lost.
	// A worker's task loop and its callback loop claim apart: each is woken
	// by its own kind of work only.
	var wake, callbacks <-chan struct{}
	if req.Limit > 0 {
		wake = s.st.Subscribe(ctx, store.ChannelQueued)
	}
	if req.CallbackLimit > 0 {
		callbacks = s.st.Subscribe(ctx, store.ChannelCallbacks)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var recheck <-chan time.Time // nil: never
	if every := s.cfg.ClaimRecheck; every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		recheck = t.C
	}
	reauth := time.NewTicker(auth.DefaultRevocationTTL)
	defer reauth.Stop()
	claim := store.TaskInstanceClaimParams{WorkerID: req.WorkerID, Queues: req.Queues, Limit: req.Limit,
		Reclaim: req.Reclaim, Holding: req.Holding, Runs: map[int64]*core.DagRun{}, DagRunID: s.cfg.OnlyDagRunID}
	if req.Start != nil {
		claim.Hostname, claim.PID, claim.Start = req.Start.Hostname, req.Start.PID, true
	}
	opened := s.clock.Now()
	for waited := false; ; waited = true {
		claim.Now = s.clock.Now()
		if waited {
			if ok, err := s.stillWaiting(ctx, r, req.WorkerID, opened, claim.Now); err != nil || !ok {
				if err == nil {
					noWork(w)
				}
				return err
			}
		}
		tis, err := s.svc.ClaimTries(ctx, &claim)
		if err != nil {
			return fmt.Errorf("claim task instances for worker %s: %w", req.WorkerID, err)
		}
		cbs, err := s.claimCallbacks(ctx, req.WorkerID, min(req.CallbackLimit, s.cfg.MaxClaimBatch))
		if err != nil {
			return fmt.Errorf("claim callbacks for worker %s: %w", req.WorkerID, err)
		}
		if len(tis) > 0 || len(cbs) > 0 {
			wls, err := s.workloads(ctx, tis, claim.Runs)
			if err != nil {
				return err
			}
			forOlderClient(r, wls)
			if req.Start != nil {
				slim := speaks(r, execclient.SlimRunVersion)
				for i := range wls {
					s.startedRun(ctx, &wls[i], slim)
				}
			}
			writeJSON(w, http.StatusOK, execclient.ClaimResponse{Workloads: wls, Callbacks: cbs})
			return nil
		}
	wait:
		for {
			select {
			case <-wake:
			case <-callbacks:
			case <-recheck:
			case <-reauth.C: // a credential revoked while no work comes: the worker hears it within the cache's life
				if _, err := s.authenticate(r, auth.ScopeWorker); err != nil {
					return err
				}
				continue
			case <-timer.C:
				noWork(w)
				return nil
			case <-draining(ctx): // the api-server shuts down: no more waiting
				noWork(w)
				return nil
			case <-ctx.Done():
				return nil // client gone
			}
			break wait
		}
	}
}

// noWork answers a claim with no work.
func noWork(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, execclient.ClaimResponse{Workloads: []execclient.Workload{}})
}

// silentAfter is how long a claim must have waited before it asks whether
// its worker still heartbeats: a worker that opened it was alive then.
const silentAfter = time.Second

// stillWaiting says whether a claim that has waited since opened may still
// hand out work: its credential is still valid (revoked or expired
// meanwhile: the error, 401, which stops the worker), and its worker has
// not gone silent (job.Silent: stopped with SIGSTOP, partitioned away, or
// dead with its connection open). A silent worker's poll ends empty: a try
// handed to it would start only to be failed over, its retry spent.
func (s *server) stillWaiting(ctx context.Context, r *http.Request, workerID string, opened, now time.Time) (bool, error) {
	if _, err := s.authenticate(r, auth.ScopeWorker); err != nil {
		return false, err
	}
	if now.Sub(opened) < silentAfter {
		return true, nil
	}
	j, err := s.st.WorkerLastBeat(ctx, workerID)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return true, nil // a worker that never heartbeats (an old version's): nothing to judge by
	case err != nil:
		return false, fmt.Errorf("read the heartbeat of worker %s: %w", workerID, err)
	case job.Silent(j, now):
		s.log.Debug("a claim's worker went silent while it waited: it gets nothing", "worker_id", workerID,
			"last_heartbeat", j.Heartbeat, "interval", j.Interval)
		return false, nil
	}
	return true, nil
}

// startedRun gives the workload of a try the claim started (or a reclaim
// returned running: this process started it and lost the answer) its run
// context. A workload left without one (the database failed) makes the
// worker call run, which answers with the try it started. For a client
// that speaks execclient.SlimRunVersion (slim) the context leaves out the
// try and the run, which the workload carries already.
func (s *server) startedRun(ctx context.Context, wl *execclient.Workload, slim bool) {
	if wl.TI.State != core.TIRunning {
		return
	}
	rc, err := s.runContext(ctx, &wl.TI, &wl.DagRun)
	if err != nil {
		return
	}
	if slim {
		rc.TI, rc.DagRun = core.TaskInstance{}, core.DagRun{}
	}
	wl.Run = rc
}

// workloads builds the workload of every claimed instance; runs are the
// runs the claim read (store.TaskInstanceClaimParams.Runs), which hold
// every claimed instance's.
func (s *server) workloads(ctx context.Context, tis []core.TaskInstance, runs map[int64]*core.DagRun) ([]execclient.Workload, error) {
	versions := map[int64]*core.DagVersion{}
	out := make([]execclient.Workload, 0, len(tis))
	for _, ti := range tis {
		v, ok := versions[ti.DagVersionID]
		if !ok {
			var err error
			if v, err = s.versions.Get(ctx, s.st, ti.DagVersionID); err != nil {
				return nil, fmt.Errorf("load dag version %d of task instance %s: %w", ti.DagVersionID, ti.ID, err)
			}
			versions[ti.DagVersionID] = v
		}
		run := runs[ti.DagRunID]
		if run == nil {
			return nil, fmt.Errorf("the claim of task instance %s did not read its dag run %s/%s", ti.ID, ti.DagID, ti.RunID)
		}
		task := v.Spec.Task(ti.TaskID)
		if task == nil {
			return nil, fmt.Errorf("task %s is not in dag %s version %d", ti.TaskID, ti.DagID, v.Version)
		}
		tok, err := s.tokens.IssueExecution(ti.ID)
		if err != nil {
			return nil, err
		}
		if ti.State == core.TIRunning {
			s.handed.put(tok, ti)
		}
		out = append(out, execclient.Workload{
			TI: ti, Task: *task, DagRun: *run, Token: tok,
			Dag: execclient.DagInfo{DagID: v.Spec.DagID, Params: v.Spec.Params, FileLoc: v.Spec.FileLoc,
				TemplateSyntax: v.Spec.TemplateSyntax},
		})
	}
	return out, nil
}
