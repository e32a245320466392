package execapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// The routes of a claimed callback's attempt (docs/emission.md#callbacks),
// each with that attempt's callback token: its log, heartbeat and report,
// its notifier's connection or event, nothing of any task's.
func (s *server) registerCallbacks(mux *http.ServeMux) {
	mux.HandleFunc("PUT /execution/callbacks/{id}/heartbeat", s.callback(s.callbackHeartbeat))
	mux.HandleFunc("PATCH /execution/callbacks/{id}/state", s.callback(s.callbackState))
	mux.HandleFunc("POST /execution/callbacks/{id}/logs", s.callback(s.callbackLog))
	mux.HandleFunc("GET /execution/callbacks/{id}/connections/{conn_id}", s.callback(s.callbackConnection))
	mux.HandleFunc("POST /execution/callbacks/{id}/asset-events", s.callback(s.callbackAssetEvent))
}

// callbackHandler serves one route of a callback's attempt.
type callbackHandler func(w http.ResponseWriter, r *http.Request, id int64, attempt int) error

// callback wraps a callbackHandler: a callback token whose subject is the
// path's callback (and names the attempt).
func (s *server) callback(h callbackHandler) http.HandlerFunc {
	return s.authed(auth.ScopeCallback, func(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("callback id must be a positive integer, got %q: %w", r.PathValue("id"), core.ErrInvalid)
		}
		for attempt := 1; attempt <= maxCallbackAttempt; attempt++ {
			if c.Subject == auth.CallbackSubject(id, attempt) {
				return h(w, r, id, attempt)
			}
		}
		return fmt.Errorf("the token is not callback %d's: %w", id, core.ErrForbidden)
	})
}

// maxCallbackAttempt bounds the attempts a token may name ([callbacks]
// max_attempts is far below it).
const maxCallbackAttempt = 1000

// callbackHeartbeat serves PUT /execution/callbacks/{id}/heartbeat; 409
// when the attempt no longer runs (the worker should stop it).
func (s *server) callbackHeartbeat(w http.ResponseWriter, r *http.Request, id int64, attempt int) error {
	if err := s.st.CallbackHeartbeat(r.Context(), id, attempt, s.clock.Now()); err != nil {
		return callbackGone(err, id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// callbackState serves PATCH /execution/callbacks/{id}/state: the
// attempt's end, success or failed. A failed callback changes nothing else:
// the state change that fired it was committed before it existed.
func (s *server) callbackState(w http.ResponseWriter, r *http.Request, id int64, attempt int) error {
	var req execclient.CallbackReport
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	if !req.State.Terminal() {
		return fmt.Errorf("state must be success or failed, got %q: %w", req.State, core.ErrInvalid)
	}
	err := s.st.CallbackFinish(r.Context(), &store.CallbackFinishParams{ID: id, Attempt: attempt, State: req.State,
		Error: truncate(req.Error, maxCallbackError), Now: s.clock.Now()})
	if err != nil {
		return callbackGone(err, id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// maxCallbackError bounds the error a callback's row keeps (its log has
// the rest).
const maxCallbackError = 4096

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// callbackLog serves POST /execution/callbacks/{id}/logs?offset=N: as a
// try's log (appendLog), into the attempt's log beside the run's.
func (s *server) callbackLog(w http.ResponseWriter, r *http.Request, id int64, attempt int) error {
	return s.appendChunk(w, r, fmt.Sprintf("callback %d's", id), func() (tasklog.Key, error) {
		cb, err := s.runningCallback(r, id, attempt)
		if err != nil {
			return tasklog.Key{}, err
		}
		return tasklog.CallbackKey(cb, attempt), nil
	})
}

// callbackGone answers a callback attempt that no longer runs with 409
// not_running.
func callbackGone(err error, id int64) error {
	if errors.Is(err, core.ErrConflict) || errors.Is(err, core.ErrNotFound) {
		return withStatus(http.StatusConflict, execclient.ReasonNotRunning,
			fmt.Errorf("callback %d's attempt is no longer running; the worker should stop it: %w", id, err))
	}
	return err
}

// claimCallbacks claims up to limit fired callbacks for workerID and
// builds their workloads, each with a token of its attempt.
func (s *server) claimCallbacks(ctx context.Context, workerID string, limit int) ([]execclient.CallbackWorkload, error) {
	cbs, err := s.st.CallbackClaim(ctx, &store.CallbackClaimParams{WorkerID: workerID, Limit: limit, Now: s.clock.Now(),
		DagRunID: s.cfg.OnlyDagRunID})
	if err != nil || len(cbs) == 0 {
		return nil, err
	}
	out := make([]execclient.CallbackWorkload, 0, len(cbs))
	for _, cb := range cbs {
		run, err := s.st.DagRunGet(ctx, cb.DagID, cb.RunID)
		if err != nil {
			return nil, fmt.Errorf("load dag run %s/%s of callback %d: %w", cb.DagID, cb.RunID, cb.ID, err)
		}
		v, err := s.versions.Get(ctx, s.st, run.DagVersionID)
		if err != nil {
			return nil, fmt.Errorf("load dag version %d of callback %d: %w", run.DagVersionID, cb.ID, err)
		}
		params, err := mergeParams(v.Spec.Params, run.Conf)
		if err != nil {
			return nil, err
		}
		tok, err := s.tokens.IssueCallback(cb.ID, cb.Attempts)
		if err != nil {
			return nil, err
		}
		out = append(out, execclient.CallbackWorkload{Callback: cb, DagRun: *run, Params: params, Token: tok})
	}
	return out, nil
}

// callbackConnection serves GET /execution/callbacks/{id}/connections/{conn_id}:
// a webhook notifier's running attempt reads the one connection it names.
func (s *server) callbackConnection(w http.ResponseWriter, r *http.Request, id int64, attempt int) error {
	cb, err := s.runningCallback(r, id, attempt)
	if err != nil {
		return err
	}
	connID := r.PathValue("conn_id")
	if cb.Spec.Notifier != core.NotifierWebhook || cb.Spec.ConnID != connID {
		return fmt.Errorf("callback %d may read only the connection its webhook notifier names, not %q: %w", id, connID, core.ErrForbidden)
	}
	conn, err := s.st.ConnectionGet(r.Context(), connID)
	if err != nil {
		return fmt.Errorf("connection %q: %w", connID, err)
	}
	writeJSON(w, http.StatusOK, execclient.Connection{ConnID: conn.ID, URI: conn.URI})
	return nil
}

// callbackAssetEvent serves POST /execution/callbacks/{id}/asset-events:
// an asset_event notifier's running attempt emits its event, a Go
// callback's an event of one of its outlets (service.EmitFromCallback): 201 with the receipt, 200 with the first
// receipt when an earlier attempt emitted it.
func (s *server) callbackAssetEvent(w http.ResponseWriter, r *http.Request, id int64, attempt int) error {
	var req execclient.CallbackEmitRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	er := emission.Request{PartitionKey: req.PartitionKey, PartitionDate: req.PartitionDate, Extra: req.Extra, IdempotencyKey: req.IdempotencyKey}
	if req.Asset != nil {
		er.Asset = *req.Asset
	}
	rec, err := s.svc.EmitFromCallback(r.Context(), id, attempt, er)
	if err != nil {
		return err
	}
	writeReceipt(w, rec)
	return nil
}

// runningCallback returns callback id when attempt is its running one.
func (s *server) runningCallback(r *http.Request, id int64, attempt int) (*core.Callback, error) {
	cb, err := s.st.CallbackGet(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if cb.State != core.CallbackRunning || cb.Attempts != attempt {
		return nil, callbackGone(fmt.Errorf("callback %d is %s in attempt %d: %w", id, cb.State, cb.Attempts, core.ErrConflict), id)
	}
	return cb, nil
}
