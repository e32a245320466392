package execapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// MaxTriggeringEvents is how many of the events that created an
// asset-triggered run its run context carries to each try (the oldest);
// the rest are read through the REST API.
const MaxTriggeringEvents = 1000

// run serves PATCH /execution/task-instances/{id}/run: queued (claimed by a
// worker) → running; returns the run context.
func (s *server) run(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	id := c.Subject // the try gate checked it is the path's id
	var req execclient.RunRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	ctx := r.Context()
	cur, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	ti, err := s.svc.StartTry(ctx, &store.TaskInstanceStartParams{
		ID: id, WorkerID: cur.WorkerID, Hostname: req.Hostname, PID: req.PID, Now: s.clock.Now(),
	}, cur.DagVersionID)
	if errors.Is(err, core.ErrConflict) {
		ti, err = s.startedBy(ctx, id, &req, err)
	}
	if errors.Is(err, core.ErrConflict) || errors.Is(err, core.ErrNotFound) {
		return withStatus(http.StatusConflict, execclient.ReasonInvalidState,
			fmt.Errorf("task instance %s cannot start: it is %s, not queued and claimed: %w", id, cur.State, err))
	}
	if err != nil {
		return fmt.Errorf("start task instance %s: %w", id, err)
	}
	run, err := s.st.DagRunGet(ctx, ti.DagID, ti.RunID)
	if err != nil {
		return fmt.Errorf("load dag run %s/%s: %w", ti.DagID, ti.RunID, err)
	}
	rc, err := s.runContext(ctx, ti, run)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rc)
	return nil
}

// runContext is what a started try ti of run needs to run.
func (s *server) runContext(ctx context.Context, ti *core.TaskInstance, run *core.DagRun) (*execclient.RunContext, error) {
	v, err := s.versions.Get(ctx, s.st, ti.DagVersionID)
	if err != nil {
		return nil, fmt.Errorf("load dag version %d: %w", ti.DagVersionID, err)
	}
	params, err := mergeParams(v.Spec.Params, run.Conf)
	if err != nil {
		return nil, err
	}
	rc := execclient.RunContext{DagRun: *run, TI: *ti, MaxTries: ti.MaxTries, Params: params}
	if run.RunType == core.RunAssetTriggered {
		p := &store.AssetEventListParams{ConsumedByRunID: run.ID, Page: store.Page{Limit: MaxTriggeringEvents}}
		rc.TriggeringAssetEvents, rc.TriggeringAssetEventsTotal, err = store.List(ctx, p, s.st.AssetEventList, s.st.AssetEventCount)
		if err != nil {
			return nil, fmt.Errorf("load the asset events of dag run %s/%s: %w", ti.DagID, ti.RunID, err)
		}
	}
	if operator.ResumeOf(ti) != nil && s.logs != nil {
		if rc.LogSize, err = s.logs.Size(ctx, tasklog.KeyOf(ti)); err != nil {
			return nil, err
		}
	}
	return &rc, nil
}

// startedBy answers a start repeated by the worker process that made it:
// its first answer was lost (the api-server died, or the client gave up
// waiting), so it asks again, and the try it started is running under
// its host and pid. Then the try is returned as started; otherwise
// conflict stands. A different process (another worker, or the same
// worker's next life) is refused, so a try never runs twice.
func (s *server) startedBy(ctx context.Context, id string, req *execclient.RunRequest, conflict error) (*core.TaskInstance, error) {
	cur, err := s.st.TaskInstanceGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("start task instance %s: %w", id, err)
	}
	if cur.State != core.TIRunning || req.PID == 0 || cur.PID != req.PID || cur.Hostname != req.Hostname {
		return nil, conflict
	}
	return cur, nil
}

// mergeParams overlays a run's conf on the DAG's params, as Airflow does.
func mergeParams(params map[string]any, conf json.RawMessage) (map[string]any, error) {
	out := maps.Clone(params)
	if out == nil {
		out = map[string]any{}
	}
	if len(conf) == 0 || string(conf) == "null" {
		return out, nil
	}
	var m map[string]any
	if err := json.Unmarshal(conf, &m); err != nil {
		return nil, fmt.Errorf("dag run conf is not a JSON object: %w", err)
	}
	maps.Copy(out, m)
	return out, nil
}

// state serves PATCH /execution/task-instances/{id}/state. The server
// decides retries: failed with tries left becomes up_for_retry.
func (s *server) state(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	var req execclient.StateRequest
	if err := readJSON(w, r, deferralBody, &req); err != nil {
		return err
	}
	if req.State == core.TIDeferred {
		if req.Log != nil {
			return fmt.Errorf("a deferral carries no log: ship it with POST .../logs first (the resumed try goes on from its end): %w",
				core.ErrInvalid)
		}
		if req.Next != nil {
			return fmt.Errorf("a deferral claims no next try (next): only a final state does: %w", core.ErrInvalid)
		}
		r, _, err := s.gateAgain(r, c)
		if err != nil {
			return err
		}
		return s.deferTry(w, r, c, req.Deferral)
	}
	if req.Deferral != nil {
		return fmt.Errorf("only a deferred state names a trigger, next_method, next_kwargs or timeout: %w", core.ErrInvalid)
	}
	if err := runs.CheckReported(req.State); err != nil {
		return err
	}
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	claim, err := s.nextClaim(r, req.Next)
	if err != nil {
		return err
	}
	how, err := failureOf(&req)
	if err != nil {
		return err
	}
	end := service.TryEnd{State: req.State, Failure: how, Claim: claim}
	var logNext *int64
	if req.Log != nil { // stored first: a try seen ended has its whole log
		if end.Before, err = s.tailInTx(r.Context(), ti, req.Log, &logNext); err != nil {
			return err
		}
	}
	res, err := s.svc.EndTry(r.Context(), ti, end)
	if handed(r) && (errors.Is(err, core.ErrConflict) && !isGap(err) || errors.Is(err, core.ErrNotFound)) {
		// The try handed out left the state it was in, or a retry or a
		// clear replaced it: judged as the gate judges it, it may still
		// end (failed over) or not (its tail kept, as below).
		var again *core.TaskInstance
		if r, again, err = s.gateAgain(r, c); err != nil {
			if end.Before != nil {
				_, _ = s.appendTail(r.Context(), ti, req.Log)
			}
			return err
		}
		ti = again
		res, err = s.svc.EndTry(r.Context(), ti, end)
	}
	if errors.Is(err, core.ErrConflict) && !isGap(err) {
		if end.Before != nil { // the tail is kept, as the try's own
			_, _ = s.appendTail(r.Context(), ti, req.Log)
		}
		return notRunning(ti)
	}
	if err != nil {
		return err
	}
	if s.finished != nil && ti.StartDate != nil {
		s.finished(req.State, s.clock.Now().Sub(*ti.StartDate))
	}
	if s.traces != nil {
		s.traceFinished(r.Context(), ti, res.State, res.NextRetryAt)
	}
	out := execclient.StateResponse{State: res.State, NextRetryAt: res.NextRetryAt, LogNextOffset: logNext}
	if len(res.Next) > 0 {
		// A failure here is answered 500: the worker's retry finds the
		// try ended, and its next claim reclaims what was claimed.
		wls, err := s.workloads(r.Context(), res.Next, res.Runs)
		if err != nil {
			return err
		}
		forOlderClient(r, wls)
		s.startedRun(r.Context(), &wls[0], speaks(r, execclient.SlimRunVersion))
		out.Next = &wls[0]
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// nextClaim turns a final state report's request for the worker's next
// try (execclient.StateRequest.Next) into the claim that ends it, for the
// worker whose credential the request also carries; nil without one.
func (s *server) nextClaim(r *http.Request, next *execclient.NextClaim) (*store.TaskInstanceClaimParams, error) {
	if next == nil {
		return nil, nil
	}
	if next.Start.PID <= 0 || next.Start.Hostname == "" {
		return nil, fmt.Errorf("next.start names the worker process that runs the next try (hostname and pid > 0), got %q and %d: %w",
			next.Start.Hostname, next.Start.PID, core.ErrInvalid)
	}
	c, err := s.authenticateHeader(r, execclient.WorkerAuthorizationHeader, auth.ScopeWorker)
	if err != nil {
		return nil, fmt.Errorf("a report that claims the next try (next) needs the worker's credential: %w", err)
	}
	queues := next.Queues
	if len(queues) == 0 {
		queues = []string{core.DefaultQueue}
	}
	return &store.TaskInstanceClaimParams{WorkerID: c.Subject, Queues: queues, Limit: 1, Start: true,
		Hostname: next.Start.Hostname, PID: next.Start.PID, DagRunID: s.cfg.OnlyDagRunID}, nil
}

// deferTry defers the token's running try on d's trigger.
func (s *server) deferTry(w http.ResponseWriter, r *http.Request, c *auth.Claims, d *core.Deferral) error {
	if d == nil || d.Trigger.Type == "" {
		return fmt.Errorf("a deferral names its trigger: {\"state\": \"deferred\", \"trigger\": {\"type\": ..., \"kwargs\": {...}}}: %w", core.ErrInvalid)
	}
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	if _, err := s.svc.DeferTry(r.Context(), ti, *d); errors.Is(err, core.ErrConflict) {
		return notRunning(ti)
	} else if err != nil {
		return err
	} else if s.traces != nil {
		s.traces.TryDeferred(ti, d.Trigger.Type, s.clock.Now())
	}
	writeJSON(w, http.StatusOK, execclient.StateResponse{State: core.TIDeferred})
	return nil
}

// notRunning answers 409 not_running for a try that stopped running.
func notRunning(ti *core.TaskInstance) error {
	return withStatus(http.StatusConflict, execclient.ReasonNotRunning, notRunningErr(ti, core.ErrConflict))
}

// taskSpec returns the task's definition from the dag version it runs.
func (s *server) taskSpec(ctx context.Context, ti *core.TaskInstance) (*core.Task, error) {
	v, err := s.versions.Get(ctx, s.st, ti.DagVersionID)
	if err != nil {
		return nil, fmt.Errorf("load dag version %d: %w", ti.DagVersionID, err)
	}
	task := v.Spec.Task(ti.TaskID)
	if task == nil {
		return nil, fmt.Errorf("task %s is not in dag %s version %d", ti.TaskID, ti.DagID, v.Version)
	}
	return task, nil
}

// heartbeat serves PUT /execution/task-instances/{id}/heartbeat; 409
// not_running tells the worker to kill the task. The heartbeat of a try
// failed over for missed heartbeats, its retry not begun, takes it back
// (service.HeartbeatTry).
func (s *server) heartbeat(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	id := c.Subject // the try gate checked it is the path's id
	var req execclient.HeartbeatRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	err = s.svc.HeartbeatTry(r.Context(), ti)
	if errors.Is(err, core.ErrConflict) || errors.Is(err, core.ErrNotFound) {
		return withStatus(http.StatusConflict, execclient.ReasonNotRunning,
			fmt.Errorf("task instance %s is no longer running; the task should stop: %w", id, err))
	}
	if err != nil {
		return fmt.Errorf("heartbeat task instance %s: %w", id, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// failureOf returns how the try a state request ends failed
// (runs.Failure); a request both no_retry and interrupted is refused
// (core.ErrInvalid).
func failureOf(r *execclient.StateRequest) (runs.Failure, error) {
	switch {
	case r.NoRetry && r.Interrupted:
		return 0, fmt.Errorf("a try ends no_retry or interrupted, not both: %w", core.ErrInvalid)
	case r.NoRetry:
		return runs.FailedForGood, nil
	case r.Interrupted:
		return runs.Interrupted, nil
	}
	return runs.FailedItself, nil
}
