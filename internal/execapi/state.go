package execapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// stateRoute is one way a try names a state scope: its own task instance
// (Airflow's /store/ti/{id}/{key}) or an asset by name or uri. Every route
// is served by the same four handlers and answers the same entry shape.
type stateRoute struct {
	// keyPaths name one key (GET, PUT, DELETE); clearPath every key.
	keyPaths  []string
	clearPath string
	// want returns the scope the request asks for, before authorization.
	want func(r *http.Request, c *auth.Claims) (core.StateScope, error)
}

// stateRoutes are the state routes (docs/architecture.md#worker--execution-api):
// task state under Airflow's paths; asset state with the key in the path
// too (/store/asset/by-name/value/{key}?name=), Airflow's /value?key=
// accepted as well.
var stateRoutes = []stateRoute{
	{keyPaths: []string{"/store/ti/{id}/{key}"}, clearPath: "/store/ti/{id}",
		want: func(*http.Request, *auth.Claims) (core.StateScope, error) {
			return core.StateScope{Kind: core.StateTask}, nil // the try gate checked the path's id
		}},
	assetStateRoute("by-name", "name", core.AssetScopeByName),
	assetStateRoute("by-uri", "uri", core.AssetScopeByURI),
}

// assetStateRoute names an asset by the query parameter param.
func assetStateRoute(prefix, param string, scope func(string) core.StateScope) stateRoute {
	base := "/store/asset/" + prefix
	return stateRoute{keyPaths: []string{base + "/value/{key}", base + "/value"}, clearPath: base + "/clear",
		want: func(r *http.Request, _ *auth.Claims) (core.StateScope, error) {
			v := r.URL.Query().Get(param)
			if v == "" {
				return core.StateScope{}, fmt.Errorf("query parameter %q is required (the asset's %s): %w", param, param, core.ErrInvalid)
			}
			return scope(v), nil
		}}
}

// stateHandler serves one state request once it is authorized.
type stateHandler func(w http.ResponseWriter, r *http.Request, scope core.StateScope, by core.StateWriter, key string) error

// registerState adds every state route.
func (s *server) registerState(mux *http.ServeMux, svc *statestore.Service, st store.Store) {
	s.states = svc
	if s.states == nil {
		s.states = statestore.New(st, s.clock, statestore.Config{DefaultRetentionDays: statestore.DefaultRetentionDays})
	}
	for _, rt := range stateRoutes {
		for _, p := range rt.keyPaths {
			mux.HandleFunc("GET /execution"+p, s.execution(s.stateServe(rt, false, s.stateGet)))
			mux.HandleFunc("PUT /execution"+p, s.execution(s.stateServe(rt, true, s.stateSet)))
			mux.HandleFunc("DELETE /execution"+p, s.execution(s.stateServe(rt, true, s.stateDelete)))
		}
		mux.HandleFunc("POST /execution"+rt.keyPaths[0]+"/object", s.execution(s.stateServe(rt, true, s.stateReserveObject)))
		mux.HandleFunc("DELETE /execution"+rt.clearPath, s.execution(s.stateServe(rt, true, s.stateClear)))
	}
	mux.HandleFunc("POST /execution/state-objects/claim", s.worker(s.stateObjectsClaim))
	mux.HandleFunc("POST /execution/state-objects/done", s.worker(s.stateObjectsDone))
}

// stateServe authorizes a request (stateAccess) and hands it to h with the
// key from the path, or else from the query (Airflow's asset form).
func (s *server) stateServe(rt stateRoute, write bool, h stateHandler) authedHandler {
	return func(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
		want, err := rt.want(r, c)
		if err != nil {
			return err
		}
		scope, by, err := s.stateAccess(r.Context(), c, want, write)
		if err != nil {
			return err
		}
		key := r.PathValue("key")
		if key == "" {
			key = r.URL.Query().Get("key")
		}
		return h(w, r, scope, by, key)
	}
}

// stateAccess checks the token's try and asks the state service what it may
// reach. The try must be current and running, else 403 (invalid_state or
// not_running) and nothing changes: the token of a try that is over no
// longer grants anything. One narrow read of the try (StateTry), not
// cached: a try that finishes, or is cleared by another process, loses its
// access at once. Then the service's rule: a try's own task state; the
// state of the active assets its task declares (404 unknown_asset for an
// unknown or inactive one, 403 for an undeclared one).
func (s *server) stateAccess(ctx context.Context, c *auth.Claims, want core.StateScope, write bool) (core.StateScope, core.StateWriter, error) {
	try, err := s.st.StateTry(ctx, c.Subject)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return want, core.StateWriter{}, withStatus(http.StatusForbidden, execclient.ReasonInvalidState,
			fmt.Errorf("task instance try %s is no longer current: %w", c.Subject, err))
	case err != nil:
		return want, core.StateWriter{}, fmt.Errorf("load task instance %s: %w", c.Subject, err)
	case try.State != core.TIRunning:
		return want, core.StateWriter{}, forbidden(notRunning(&core.TaskInstance{ID: c.Subject, State: try.State}))
	}
	scope, by, err := s.states.AuthorizeTry(ctx, try, want, write, s.dagOf)
	return scope, by, unknownAssetStatus(err)
}

// dagOf returns the DAG of a version from the server's cache.
func (s *server) dagOf(ctx context.Context, versionID int64) (*core.DAG, error) {
	v, err := s.versions.Get(ctx, s.st, versionID)
	if err != nil {
		return nil, err
	}
	return &v.Spec, nil
}

// unknownAssetStatus answers an unknown or inactive asset with 404
// unknown_asset (as Airflow), telling it apart from an absent key.
func unknownAssetStatus(err error) error {
	if errors.Is(err, statestore.ErrUnknownAsset) {
		return withStatus(http.StatusNotFound, execclient.ReasonUnknownAsset, err)
	}
	return err
}

// stateGet serves GET: the entry, or 404 when the key is absent.
func (s *server) stateGet(w http.ResponseWriter, r *http.Request, scope core.StateScope, _ core.StateWriter, key string) error {
	e, err := s.states.Get(r.Context(), scope, key)
	if errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("no %s state key %q for %s: %w", scope.Kind, key, scope.Describe(), core.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("get %s state %q: %w", scope.Kind, key, err)
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// stateSet serves PUT: 400 for null, NaN, ±Inf or a bad retention (any
// retention for asset state), 413 over [state_store] max_value_bytes.
func (s *server) stateSet(w http.ResponseWriter, r *http.Request, scope core.StateScope, by core.StateWriter, key string) error {
	if err := statevalue.CheckKey(key); err != nil {
		return err
	}
	req, err := s.readStoreRequest(w, r, key)
	if err != nil {
		return err
	}
	ret, err := statevalue.ParseRetentionJSON(req.Retention)
	if err != nil {
		return err
	}
	e, err := s.states.Set(r.Context(), scope, key, req.Value, ret, by)
	if err != nil {
		return fmt.Errorf("set %s state of %s: %w", scope.Kind, scope.Describe(), err)
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// readStoreRequest reads a PUT body of at most the service's limit; a body
// that is not JSON because of NaN or Infinity says so.
func (s *server) readStoreRequest(w http.ResponseWriter, r *http.Request, key string) (*execclient.StoreRequest, error) {
	body, err := readBody(w, r, s.states.MaxBodyBytes(), func() error { return s.states.TooLarge(key, -1) })
	if err != nil {
		return nil, fmt.Errorf("body for state key %q: %w", key, err)
	}
	var req execclient.StoreRequest
	if err := decodeBody(body, &req); err != nil {
		if verr := statevalue.Explain(body); verr != nil {
			err = verr // names NaN, Infinity or the depth limit
		}
		return nil, fmt.Errorf("invalid body for state key %q (want {\"value\": <json>, \"retention\": \"6h\"|\"never\"}): %w", key, err)
	}
	return &req, nil
}

// stateDelete serves DELETE of one key: a no-op when the key is absent.
func (s *server) stateDelete(w http.ResponseWriter, r *http.Request, scope core.StateScope, _ core.StateWriter, key string) error {
	if err := s.states.Delete(r.Context(), scope, key); err != nil {
		return fmt.Errorf("delete %s state of %s: %w", scope.Kind, scope.Describe(), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// stateClear serves DELETE of a scope: every key of it, or for task state
// with ?all_map_indices=true of every map index of the task in the run.
func (s *server) stateClear(w http.ResponseWriter, r *http.Request, scope core.StateScope, _ core.StateWriter, _ string) error {
	all := false
	if v := r.URL.Query().Get("all_map_indices"); v != "" {
		var err error
		if all, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("all_map_indices must be true or false, got %q: %w", v, core.ErrInvalid)
		}
	}
	if err := s.states.Clear(r.Context(), scope, all); err != nil {
		return fmt.Errorf("clear %s state of %s: %w", scope.Kind, scope.Describe(), err)
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

// stateReserveObject serves POST .../object: a new object reference of the
// key for the worker-side backend's write (docs/state-backends.md#sweeping).
func (s *server) stateReserveObject(w http.ResponseWriter, r *http.Request, scope core.StateScope, _ core.StateWriter, key string) error {
	ref, scope, err := s.states.ReserveObject(r.Context(), scope, key)
	if err != nil {
		return fmt.Errorf("reserve an object for %s state %q of %s: %w", scope.Kind, key, scope.Describe(), err)
	}
	writeJSON(w, http.StatusOK, execclient.StateObjectResponse{Ref: ref, Scope: scope})
	return nil
}

// maxSweepBatch bounds one claim or report of state objects.
const maxSweepBatch = 500

// stateObjectsClaim serves POST /state-objects/claim (worker credential).
func (s *server) stateObjectsClaim(w http.ResponseWriter, r *http.Request, _ *auth.Claims) error {
	var req execclient.StateObjectsClaimRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	if req.Limit < 1 || req.Limit > maxSweepBatch {
		return fmt.Errorf("limit must be between 1 and %d, got %d: %w", maxSweepBatch, req.Limit, core.ErrInvalid)
	}
	refs, err := s.states.ClaimObjects(r.Context(), req.Limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, execclient.StateObjectsResponse{Refs: append([]string{}, refs...)})
	return nil
}

// stateObjectsDone serves POST /state-objects/done (worker credential).
func (s *server) stateObjectsDone(w http.ResponseWriter, r *http.Request, _ *auth.Claims) error {
	var req execclient.StateObjectsRequest
	if err := readJSON(w, r, smallBody*8, &req); err != nil {
		return err
	}
	if len(req.Refs) > maxSweepBatch {
		return fmt.Errorf("at most %d references per report, got %d: %w", maxSweepBatch, len(req.Refs), core.ErrInvalid)
	}
	if err := s.states.ObjectsSwept(r.Context(), req.Refs); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
