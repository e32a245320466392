package execapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/runs"
)

// xcomTarget parses the XCom path and map_index query of a request.
func xcomTarget(r *http.Request, defaultMapIndex int) (execclient.XComKey, error) {
	k := execclient.XComKey{DagID: r.PathValue("dag_id"), RunID: r.PathValue("run_id"), TaskID: r.PathValue("task_id"),
		Key: r.PathValue("key"), MapIndex: defaultMapIndex}
	if s := r.URL.Query().Get("map_index"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < core.NoMapIndex {
			return k, fmt.Errorf("map_index must be an integer >= -1, got %q: %w", s, core.ErrInvalid)
		}
		k.MapIndex = n
	}
	return k, nil
}

// xcomGet serves GET /execution/xcoms/...: any task's XCom in the token's
// own DAG run; without map_index, a mapped task's values as one list
// (runs.PullXCom), an unmapped task's value.
func (s *server) xcomGet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	k, err := xcomTarget(r, core.NoMapIndex)
	if err != nil {
		return err
	}
	if k.DagID != ti.DagID || k.RunID != ti.RunID {
		return fmt.Errorf("a task may read XComs of its own dag run (%s/%s) only: %w", ti.DagID, ti.RunID, core.ErrForbidden)
	}
	if r.URL.Query().Get("map_index") == "" { // Airflow's xcom_pull: a mapped task's values as one list
		v, err := s.versions.Get(r.Context(), s.st, ti.DagVersionID)
		if err != nil {
			return fmt.Errorf("load dag version %d: %w", ti.DagVersionID, err)
		}
		value, err := runs.PullXCom(r.Context(), s.st, k.DagID, k.RunID, v.Spec.Task(k.TaskID), k.TaskID, k.Key)
		if errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("no XCom %q of task %s in %s/%s: %w", k.Key, k.TaskID, k.DagID, k.RunID, err)
		}
		if err != nil {
			return fmt.Errorf("get XCom: %w", err)
		}
		writeJSON(w, http.StatusOK, execclient.XComResponse{Key: k.Key, Value: value})
		return nil
	}
	x, err := s.st.XComGet(r.Context(), k.DagID, k.RunID, k.TaskID, k.MapIndex, k.Key)
	if errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("no XCom %q of task %s map_index %d in %s/%s: %w", k.Key, k.TaskID, k.MapIndex, k.DagID, k.RunID, err)
	}
	if err != nil {
		return fmt.Errorf("get XCom: %w", err)
	}
	writeJSON(w, http.StatusOK, execclient.XComResponse{Key: x.Key, Value: x.Value})
	return nil
}

// writableXCom checks that the token's try (running: tryGate) owns the XCom named by
// the request (map_index defaults to the try's own).
func (s *server) writableXCom(r *http.Request, c *auth.Claims) (execclient.XComKey, error) {
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return execclient.XComKey{}, err
	}
	k, err := xcomTarget(r, ti.MapIndex)
	if err != nil {
		return k, err
	}
	if k.DagID != ti.DagID || k.RunID != ti.RunID || k.TaskID != ti.TaskID || k.MapIndex != ti.MapIndex {
		return k, fmt.Errorf("a task may write only its own XComs (%s/%s/%s map_index %d): %w",
			ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex, core.ErrForbidden)
	}
	if k.Key == "" {
		return k, fmt.Errorf("XCom key must not be empty: %w", core.ErrInvalid)
	}
	return k, nil
}

// xcomSet serves POST /execution/xcoms/...: the body is the JSON value.
func (s *server) xcomSet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	k, err := s.writableXCom(r, c)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, s.cfg.MaxXComBytes, func() error {
		return fmt.Errorf("XCom value exceeds %d bytes: %w", s.cfg.MaxXComBytes, core.ErrTooLarge)
	})
	if err != nil {
		return err
	}
	if !json.Valid(body) {
		return fmt.Errorf("XCom value must be valid JSON: %w", core.ErrInvalid)
	}
	x := &core.XCom{DagID: k.DagID, RunID: k.RunID, TaskID: k.TaskID, MapIndex: k.MapIndex, Key: k.Key,
		Value: body, Timestamp: s.clock.Now()}
	if err := s.st.XComSet(r.Context(), x); err != nil {
		return fmt.Errorf("set XCom %q: %w", k.Key, err)
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// xcomDelete serves DELETE /execution/xcoms/...: only the try's own key.
func (s *server) xcomDelete(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	k, err := s.writableXCom(r, c)
	if err != nil {
		return err
	}
	if err := s.st.XComDelete(r.Context(), k.DagID, k.RunID, k.TaskID, k.MapIndex, k.Key); err != nil && !errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("delete XCom %q: %w", k.Key, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
