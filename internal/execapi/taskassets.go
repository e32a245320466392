package execapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// runningTI returns the token's try, which tryGate found current and
// running (else it answered 403 and nothing changed).
func (s *server) runningTI(r *http.Request, c *auth.Claims) (*core.TaskInstance, error) {
	return s.tokenTI(r, c)
}

// activeAsset returns the asset named (by name or uri) when it exists and
// is active; 404 unknown_asset otherwise (as Airflow).
func (s *server) activeAsset(ctx context.Context, named core.StateScope) (*core.AssetModel, error) {
	a, err := s.states.ActiveAsset(ctx, named)
	return a, unknownAssetStatus(err)
}

// taskAssets serves GET /execution/task-instances/{id}/assets: the concrete
// assets the running try's task reaches (its inlets, alias inlets resolved,
// then its outlets), which the in-task CLI and the Go SDK need for the
// asset-state shorthand (docs/asset-state.md).
func (s *server) taskAssets(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	dag, err := s.dagOf(r.Context(), ti.DagVersionID)
	if err != nil {
		return fmt.Errorf("load dag version %d: %w", ti.DagVersionID, err)
	}
	t := dag.Task(ti.TaskID)
	if t == nil {
		return fmt.Errorf("task %s is not in dag version %d: %w", ti.TaskID, ti.DagVersionID, core.ErrNotFound)
	}
	inlets, err := s.states.InletAssets(r.Context(), dag, ti.TaskID)
	if err != nil {
		return err
	}
	declared, err := s.states.TaskAssets(r.Context(), dag, ti.TaskID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, execclient.TaskAssetsResponse{Inlets: nonNil(inlets),
		Outlets: nonNil(dag.ConcreteAssets(t.Outlets)), Assets: nonNil(declared)})
	return nil
}

// previousSuccessfulRun answers GET .../previous-successful-dagrun: the
// successful run before the try's (service.PreviousSuccessfulRun), every
// field null when there is none.
func (s *server) previousSuccessfulRun(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	prev, err := s.svc.PreviousSuccessfulRun(r.Context(), ti)
	if err != nil {
		return err
	}
	var out execclient.PrevSuccessfulDagRun
	if prev != nil {
		out = execclient.PrevSuccessfulDagRun{DataIntervalStart: prev.DataIntervalStart, DataIntervalEnd: prev.DataIntervalEnd,
			StartDate: prev.StartDate, EndDate: prev.EndDate}
	}
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
