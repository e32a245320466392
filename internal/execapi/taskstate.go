package execapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
)

func taskStateResponse(e *statestore.Entry) execclient.TaskStateResponse {
	return execclient.TaskStateResponse{Key: e.Key, Value: e.Value, UpdatedAt: e.UpdatedAt, UpdatedByRun: e.UpdatedByRun,
		UpdatedByTry: e.UpdatedByTry, ExpiresAt: e.ExpiresAt, NeverExpire: e.NeverExpire}
}

// registerTaskState adds the task-state routes (Airflow's paths): a try
// reaches only its own task instance's state, and only while it runs.
func (s *server) registerTaskState(mux *http.ServeMux, svc *statestore.Service) {
	s.states = svc
	if s.states == nil {
		s.states = statestore.New(s.st, s.clock, statestore.Config{DefaultRetentionDays: statestore.DefaultRetentionDays})
	}
	key := "/execution/store/ti/{id}/{key}"
	mux.HandleFunc("GET "+key, s.execution(s.taskStateGet))
	mux.HandleFunc("PUT "+key, s.execution(s.taskStateSet))
	mux.HandleFunc("DELETE "+key, s.execution(s.taskStateDelete))
	mux.HandleFunc("DELETE /execution/store/ti/{id}", s.execution(s.taskStateClear))
}

// taskStateScope checks that the token is the path's try (403 otherwise),
// that the try is still current and running (409, nothing changes), and
// returns its scope and writer.
func (s *server) taskStateScope(r *http.Request, c *auth.Claims) (statestore.TaskScope, statestore.Writer, error) {
	if _, err := ownTI(r, c); err != nil {
		return statestore.TaskScope{}, statestore.Writer{}, err
	}
	// SPEC SEC-3: the token of a try that is over (finished, or replaced by
	// a retry or a clear) is refused with 403, not the 409 of the
	// state-transition routes: it no longer grants anything.
	// One narrow read of the try (TaskStateTry) rather than the whole task
	// instance: this check runs on every task-state call. It is not cached:
	// a try that finishes, or is cleared by another process, must lose its
	// access at once.
	try, err := s.st.TaskStateTry(r.Context(), c.Subject)
	if errors.Is(err, core.ErrNotFound) {
		err = withStatus(http.StatusConflict, execclient.ReasonInvalidState,
			fmt.Errorf("task instance try %s is no longer current: %w", c.Subject, err))
	} else if err != nil {
		err = fmt.Errorf("load task instance %s: %w", c.Subject, err)
	}
	if err != nil {
		return statestore.TaskScope{}, statestore.Writer{}, forbidden(err)
	}
	if try.State != core.TIRunning {
		return statestore.TaskScope{}, statestore.Writer{}, forbidden(notRunning(&core.TaskInstance{ID: c.Subject, State: try.State}))
	}
	return statestore.TaskScope(try.Scope), statestore.Writer{RunID: try.Scope.RunID, TryNumber: try.TryNumber}, nil
}

// taskStateGet serves GET /execution/store/ti/{id}/{key}.
func (s *server) taskStateGet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	scope, _, err := s.taskStateScope(r, c)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	e, err := s.states.Get(r.Context(), scope, key)
	if errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("no task state key %q for task %s map_index %d in %s/%s: %w",
			key, scope.TaskID, scope.MapIndex, scope.DagID, scope.RunID, core.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("get task state %q: %w", key, err)
	}
	writeJSON(w, http.StatusOK, taskStateResponse(e))
	return nil
}

// taskStateSet serves PUT /execution/store/ti/{id}/{key}: 400 for null,
// NaN, ±Inf or a bad retention, 413 over [state_store] max_value_bytes.
func (s *server) taskStateSet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	scope, by, err := s.taskStateScope(r, c)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	if err := statevalue.CheckKey(key); err != nil {
		return err
	}
	req, err := s.readTaskStateRequest(w, r, key)
	if err != nil {
		return err
	}
	ret, err := statevalue.ParseRetentionJSON(req.Retention)
	if err != nil {
		return err
	}
	e, err := s.states.Set(r.Context(), scope, key, req.Value, ret, by)
	if err != nil {
		return fmt.Errorf("set task state: %w", err)
	}
	writeJSON(w, http.StatusOK, taskStateResponse(e))
	return nil
}

// readTaskStateRequest reads a PUT body of at most the service's limit;
// a body that is not JSON because of NaN or Infinity says so.
func (s *server) readTaskStateRequest(w http.ResponseWriter, r *http.Request, key string) (*execclient.TaskStateRequest, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.states.MaxBodyBytes()))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, s.states.TooLarge(key, -1)
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	var req execclient.TaskStateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if !json.Valid(body) {
			_, verr := statevalue.ParseValue(body) // names NaN and Infinity
			return nil, fmt.Errorf("invalid body for state key %q: %w", key, verr)
		}
		return nil, fmt.Errorf("invalid body for state key %q (want {\"value\": <json>, \"retention\": \"6h\"|\"never\"}): %v: %w",
			key, err, core.ErrInvalid) //nolint:errorlint // the decoder's error is detail
	}
	return &req, nil
}

// taskStateDelete serves DELETE /execution/store/ti/{id}/{key}: a no-op when
// the key is absent.
func (s *server) taskStateDelete(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	scope, _, err := s.taskStateScope(r, c)
	if err != nil {
		return err
	}
	if err := s.states.Delete(r.Context(), scope, r.PathValue("key")); err != nil {
		return fmt.Errorf("delete task state: %w", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// taskStateClear serves DELETE /execution/store/ti/{id}: every key of this
// map index, or with ?all_map_indices=true of every map index of the task
// in this run.
func (s *server) taskStateClear(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	scope, _, err := s.taskStateScope(r, c)
	if err != nil {
		return err
	}
	all := false
	if v := r.URL.Query().Get("all_map_indices"); v != "" {
		if all, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("all_map_indices must be true or false, got %q: %w", v, core.ErrInvalid)
		}
	}
	if err := s.states.Clear(r.Context(), scope, all); err != nil {
		return fmt.Errorf("clear task state: %w", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// forbidden turns a conflict about the token's try into 403, keeping its
// reason and message; other errors pass through.
func forbidden(err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusConflict {
		return withStatus(http.StatusForbidden, ae.reason, ae.err)
	}
	return err
}
