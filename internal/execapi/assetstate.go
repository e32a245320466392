package execapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// assetRoute is one of the two ways a task names an asset (Airflow's paths).
type assetRoute struct {
	prefix, param string // "by-name", "name"
}

var assetRoutes = []assetRoute{{"by-name", "name"}, {"by-uri", "uri"}}

// registerAssetState adds the asset-state routes and the task's declared
// assets; it needs s.states (registerTaskState runs first).
func (s *server) registerAssetState(mux *http.ServeMux) {
	for _, rt := range assetRoutes {
		base := "/execution/store/asset/" + rt.prefix
		mux.HandleFunc("GET "+base+"/value", s.execution(rt.handle(s.assetStateGet)))
		mux.HandleFunc("PUT "+base+"/value", s.execution(rt.handle(s.assetStateSet)))
		mux.HandleFunc("DELETE "+base+"/value", s.execution(rt.handle(s.assetStateDelete)))
		mux.HandleFunc("DELETE "+base+"/clear", s.execution(rt.handle(s.assetStateClear)))
	}
	mux.HandleFunc("GET /execution/task-instances/{id}/assets", s.execution(s.taskAssets))
}

// assetHandler serves one asset-state request for the asset the query names.
type assetHandler func(w http.ResponseWriter, r *http.Request, c *auth.Claims, named statestore.AssetScope) error

// handle reads the route's query parameter (name or uri) into a scope.
func (rt assetRoute) handle(h assetHandler) authedHandler {
	return func(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
		v := r.URL.Query().Get(rt.param)
		if v == "" {
			return fmt.Errorf("query parameter %q is required (the asset's %s): %w", rt.param, rt.param, core.ErrInvalid)
		}
		named := statestore.AssetScope{Name: v}
		if rt.param == "uri" {
			named = statestore.AssetScope{URI: v}
		}
		return h(w, r, c, named)
	}
}

// runningTI returns the token's try when it is current and running; any
// other try is refused with 403 and nothing changes (SPEC SEC-3).
func (s *server) runningTI(r *http.Request, c *auth.Claims) (*core.TaskInstance, error) {
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return nil, forbidden(err)
	}
	if ti.State != core.TIRunning {
		return nil, forbidden(notRunning(ti))
	}
	return ti, nil
}

// declaredAssets returns the DAG version ti runs, its task and the
// concrete assets the task reaches: its concrete inlets and outlets and the
// assets its alias inlets resolve to now.
func (s *server) declaredAssets(r *http.Request, ti *core.TaskInstance) (*core.DAG, *core.Task, []core.Asset, error) {
	v, err := s.versions.Get(r.Context(), s.st, ti.DagVersionID)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("load dag version %d: %w", ti.DagVersionID, err)
	}
	t := v.Spec.Task(ti.TaskID)
	if t == nil {
		return nil, nil, nil, fmt.Errorf("task %s is not in dag version %d: %w", ti.TaskID, ti.DagVersionID, core.ErrNotFound)
	}
	declared, err := s.states.TaskAssets(r.Context(), &v.Spec, ti.TaskID)
	if err != nil {
		return nil, nil, nil, err
	}
	return &v.Spec, t, declared, nil
}

// activeAsset returns the asset named (by name or uri) when it exists and
// is active; 404 unknown_asset otherwise (as Airflow).
func (s *server) activeAsset(r *http.Request, named statestore.AssetScope) (*core.AssetModel, error) {
	a, err := s.states.ResolveAsset(r.Context(), named)
	if errors.Is(err, core.ErrNotFound) {
		return nil, withStatus(http.StatusNotFound, execclient.ReasonUnknownAsset, fmt.Errorf("no asset %s: %w", named, err))
	}
	if err != nil {
		return nil, err
	}
	if !a.Active {
		return nil, withStatus(http.StatusNotFound, execclient.ReasonUnknownAsset,
			fmt.Errorf("asset %q is inactive (no active DAG defines it): %w", a.Name, core.ErrNotFound))
	}
	return a, nil
}

// assetStateScope authorizes a request (SPEC AS-4): the token's try must be
// running (403), the asset must exist and be active (404, as Airflow), and
// the task must declare it as an inlet or outlet (403 naming what it
// declares; reads of undeclared assets only with [state_store]
// allow_undeclared_asset_reads). It returns the asset's scope and the
// try's provenance.
func (s *server) assetStateScope(r *http.Request, c *auth.Claims, named statestore.AssetScope, write bool) (statestore.AssetScope, statestore.Writer, error) {
	ti, err := s.runningTI(r, c)
	if err != nil {
		return statestore.AssetScope{}, statestore.Writer{}, err
	}
	a, err := s.activeAsset(r, named)
	if err != nil {
		return statestore.AssetScope{}, statestore.Writer{}, err
	}
	_, _, declared, err := s.declaredAssets(r, ti)
	if err != nil {
		return statestore.AssetScope{}, statestore.Writer{}, err
	}
	if err := s.states.CheckAssetAccess(ti.TaskID, declared, a, write); err != nil {
		return statestore.AssetScope{}, statestore.Writer{}, err
	}
	return statestore.AssetScope{AssetID: a.ID, Name: a.Name, URI: a.URI}, statestore.TaskWriter(ti), nil
}

func assetStateResponse(scope statestore.AssetScope, e *statestore.Entry) execclient.AssetStateResponse {
	b := e.UpdatedBy
	return execclient.AssetStateResponse{AssetName: scope.Name, AssetURI: scope.URI, Key: e.Key, Value: e.Value, UpdatedAt: e.UpdatedAt,
		StateWriter: store.StateWriter{Kind: b.Kind, DagID: b.DagID, RunID: b.RunID, TaskID: b.TaskID, MapIndex: b.MapIndex,
			TryNumber: b.TryNumber, User: b.User}}
}

// assetStateGet serves GET .../value?key=: 404 when the key is absent.
func (s *server) assetStateGet(w http.ResponseWriter, r *http.Request, c *auth.Claims, named statestore.AssetScope) error {
	scope, _, err := s.assetStateScope(r, c, named, false)
	if err != nil {
		return err
	}
	key := r.URL.Query().Get("key")
	e, err := s.states.Get(r.Context(), scope, key)
	if errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("no asset state key %q for asset %q: %w", key, scope.Name, core.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("get asset state %q: %w", key, err)
	}
	writeJSON(w, http.StatusOK, assetStateResponse(scope, e))
	return nil
}

// assetStateSet serves PUT .../value?key=: 400 for null, NaN, ±Inf or a
// retention, 413 over [state_store] max_value_bytes.
func (s *server) assetStateSet(w http.ResponseWriter, r *http.Request, c *auth.Claims, named statestore.AssetScope) error {
	scope, by, err := s.assetStateScope(r, c, named, true)
	if err != nil {
		return err
	}
	key := r.URL.Query().Get("key")
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
		return fmt.Errorf("set asset state of %q: %w", scope.Name, err)
	}
	writeJSON(w, http.StatusOK, assetStateResponse(scope, e))
	return nil
}

// assetStateDelete serves DELETE .../value?key=: a no-op when absent.
func (s *server) assetStateDelete(w http.ResponseWriter, r *http.Request, c *auth.Claims, named statestore.AssetScope) error {
	scope, _, err := s.assetStateScope(r, c, named, true)
	if err != nil {
		return err
	}
	if err := s.states.Delete(r.Context(), scope, r.URL.Query().Get("key")); err != nil {
		return fmt.Errorf("delete asset state of %q: %w", scope.Name, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// assetStateClear serves DELETE .../clear: every key of the asset.
func (s *server) assetStateClear(w http.ResponseWriter, r *http.Request, c *auth.Claims, named statestore.AssetScope) error {
	scope, _, err := s.assetStateScope(r, c, named, true)
	if err != nil {
		return err
	}
	if err := s.states.Clear(r.Context(), scope, false); err != nil {
		return fmt.Errorf("clear asset state of %q: %w", scope.Name, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// taskAssets serves GET /execution/task-instances/{id}/assets: the concrete
// assets the running try's task declares, which the in-task CLI and the Go
// SDK need for the shorthand (SPEC AS-2).
func (s *server) taskAssets(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	if _, err := ownTI(r, c); err != nil {
		return err
	}
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	dag, t, declared, err := s.declaredAssets(r, ti)
	if err != nil {
		return err
	}
	inlets, err := s.states.InletAssets(r.Context(), dag, ti.TaskID)
	if err != nil {
		return err
	}
	out := execclient.TaskAssetsResponse{Inlets: nonNil(inlets), Outlets: nonNil(dag.ConcreteAssets(t.Outlets)), Assets: nonNil(declared)}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil(a []core.Asset) []core.Asset {
	if a == nil {
		return []core.Asset{}
	}
	return a
}
