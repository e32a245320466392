package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// ErrUnknownAsset matches the error of a try naming an asset that does not
// exist or is inactive (the Execution API answers 404 unknown_asset, as
// Airflow); such errors also wrap core.ErrNotFound.
var ErrUnknownAsset = errors.New("unknown asset")

// unknownAsset is an error matching both ErrUnknownAsset and core.ErrNotFound.
type unknownAsset struct{ msg string }

func (e unknownAsset) Error() string        { return e.msg } // names the asset once, without the lookup's chain
func (e unknownAsset) Unwrap() error        { return core.ErrNotFound }
func (e unknownAsset) Is(target error) bool { return target == ErrUnknownAsset }

// DagOf returns the DAG of a DAG version (the Execution API passes its
// cache of decoded versions).
type DagOf func(ctx context.Context, versionID int64) (*core.DAG, error)

// AuthorizeTry decides which scope a running try may reach when it asks
// for want, and returns that scope, resolved, with the try's writer
// (docs/asset-state.md#authorization):
//
//   - task state: only its own task instance's (want names no more than
//     the kind; the scope is the try's);
//   - asset state: the asset want names by name or uri must exist and be
//     active (an error matching ErrUnknownAsset otherwise) and the task
//     must declare it as an inlet or outlet, alias inlets included (an
//     error wrapping core.ErrForbidden naming what it declares; reads of
//     undeclared assets pass with [state_store] allow_undeclared_asset_reads).
//
// The caller has checked that try is the token's and running.
func (s *Service) AuthorizeTry(ctx context.Context, try *store.StateTry, want core.StateScope, write bool, dagOf DagOf) (core.StateScope, core.StateWriter, error) {
	sc := try.Scope
	by := core.StateWriter{Kind: core.StateWriterTask, DagID: sc.DagID, RunID: sc.RunID, TaskID: sc.TaskID,
		MapIndex: sc.MapIndex, TryNumber: try.TryNumber}
	switch want.Kind {
	case core.StateTask:
		return sc, by, nil
	case core.StateAsset:
	default:
		return want, by, want.Validate()
	}
	a, err := s.ActiveAsset(ctx, want)
	if err != nil {
		return want, by, err
	}
	dag, err := dagOf(ctx, try.DagVersionID)
	if err != nil {
		return want, by, fmt.Errorf("load dag version %d: %w", try.DagVersionID, err)
	}
	declared, err := s.TaskAssets(ctx, dag, sc.TaskID)
	if err != nil {
		return want, by, err
	}
	if err := s.CheckAssetAccess(sc.TaskID, declared, a, write); err != nil {
		return want, by, err
	}
	return assetScope(a), by, nil
}

// ActiveAsset returns the asset scope names when it exists and is active;
// otherwise an error matching ErrUnknownAsset (and core.ErrNotFound) that
// says which. Tasks reach only active assets (docs/asset-state.md).
func (s *Service) ActiveAsset(ctx context.Context, scope core.StateScope) (*core.AssetModel, error) {
	a, err := s.ResolveAsset(ctx, scope)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return nil, unknownAsset{"no " + scope.Describe()}
	case err != nil:
		return nil, err
	case !a.Active:
		return nil, unknownAsset{fmt.Sprintf("asset %q is inactive (no active DAG defines it)", a.Name)}
	}
	return a, nil
}

// DeclaredAssets returns the concrete assets task taskID of dag declares as
// inlets or outlets, once each, inlets first. Aliases are not resolved
// here: Service.TaskAssets adds what alias inlets resolve to.
func DeclaredAssets(dag *core.DAG, taskID string) []core.Asset {
	t := dag.Task(taskID)
	if t == nil {
		return nil
	}
	refs := make([]core.AssetRef, 0, len(t.Inlets)+len(t.Outlets))
	refs = append(append(refs, t.Inlets...), t.Outlets...)
	return dag.ConcreteAssets(refs)
}

// CheckAssetAccess decides whether a task that declares the concrete assets
// declared may read (write false) or write the state of asset: only a
// declared asset, except that with [state_store]
// allow_undeclared_asset_reads any asset may be read. A refusal wraps
// core.ErrForbidden and names the asset and what the task declares.
func (s *Service) CheckAssetAccess(taskID string, declared []core.Asset, asset *core.AssetModel, write bool) error {
	for _, d := range declared {
		if d.Name == asset.Name {
			return nil
		}
	}
	if !write && s.cfg.AllowUndeclaredAssetReads {
		return nil
	}
	names := make([]string, len(declared))
	for i, d := range declared {
		names[i] = strconv.Quote(d.Name)
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return fmt.Errorf("task %s may not access the state of asset %q: it is not one of the task's inlets or outlets "+
		"(declared: %s): %w", taskID, asset.Name, list, core.ErrForbidden)
}
