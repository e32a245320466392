// Package stateref is the worker-side object-store backend of task state
// and asset state (docs/state-backends.md, `[workers] state_backend`). It runs in the
// worker and in the in-task CLI, never on the api-server: a value is
// written to an objstore.Store under a reference the Execution API issues
// (package stateobj names it), and only a small reference object is sent
// to the API and kept in the database. State wraps the Execution API
// client with that behaviour for every kind of state; Sweeper deletes the
// objects of removed values (docs/state-backends.md#sweeping).
package stateref

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statevalue"
)

// State is a try's state, of every kind, through the worker-side backend:
// the Execution API client's state methods, with every value kept in an
// object store under a reference the API issues (task/... for the try's
// task instance, asset/<name>/... for an asset) and only the reference in
// the database. An asset named by uri is resolved to its name by the API,
// so the name and the uri of one asset reach the same objects. It
// satisfies operator.State.
type State struct {
	client *execclient.Client
	store  Objects
}

// New wraps c, a client holding a try's identity, so that the state values
// it writes live in st. Task state needs the identity's dag, run and task:
// New refuses a client without them.
func New(c *execclient.Client, st Objects) (*State, error) {
	id := c.Identity
	if id.DagID == "" || id.RunID == "" || id.TaskID == "" {
		return nil, fmt.Errorf("state backend: the client does not name its task instance (dag %q, run %q, task %q; set %s, %s and %s)",
			id.DagID, id.RunID, id.TaskID, execclient.EnvDagID, execclient.EnvRunID, execclient.EnvTaskID)
	}
	return &State{client: c, store: st}, nil
}

// objects is the object side for scope's kind.
func (s *State) objects(scope core.StateScope) objects {
	return objects{store: s.store, what: string(scope.Kind) + " state"}
}

// DeclaredAssets lists the task's concrete inlets and outlets, once each.
func (s *State) DeclaredAssets(ctx context.Context) ([]core.Asset, error) {
	return s.client.DeclaredAssets(ctx)
}

// StateSet writes value to the object store under a new reference the
// Execution API issues for key, then stores the reference (with
// retention, for task state) through the API. Asking for the reference is
// the API's check that this try may write the scope: a finished, replaced
// or foreign try, or an undeclared asset (core.ErrForbidden), is refused
// before anything is written. A failure between the object and its
// reference leaves an object the sweep removes once its reservation's
// grace ends; the object of the value this one replaces is swept too
// (docs/state-backends.md#sweeping).
func (s *State) StateSet(ctx context.Context, scope core.StateScope, key string, value json.RawMessage, retention string) error {
	if err := statevalue.CheckKey(key); err != nil {
		return err
	}
	v, err := statevalue.ParseValue(value)
	if err != nil {
		return err
	}
	res, err := s.client.StateObjectReserve(ctx, scope, key)
	if err != nil {
		return err
	}
	ref, err := s.objects(res.Scope).put(ctx, key, v, res.Ref)
	if err != nil {
		return err
	}
	if scope.Kind == core.StateAsset {
		scope = core.AssetScopeByName(res.Scope.AssetName) // the asset the reference belongs to
	}
	return s.client.StateSet(ctx, scope, key, ref, retention)
}

// StateGet returns key's value: the object its reference names, or the
// stored value itself when it is not a reference (written inline before
// the backend was configured). The asset's name comes from the API's
// answer, so an asset the task may only read ([state_store]
// allow_undeclared_asset_reads) works too. An absent key matches
// core.ErrNotFound; a reference without its object matches
// ErrMissingObject.
func (s *State) StateGet(ctx context.Context, scope core.StateScope, key string) (json.RawMessage, error) {
	e, err := s.client.StateEntry(ctx, scope, key)
	if err != nil {
		return nil, err
	}
	owner := s.client.TaskScope()
	if scope.Kind == core.StateAsset {
		owner = core.AssetScopeByName(e.Scope.AssetName)
	}
	return s.objects(scope).follow(ctx, key, e.Value, owner)
}

// StateDelete deletes key. Its object goes with the sweep, as every
// removed row's does (docs/state-backends.md#sweeping).
func (s *State) StateDelete(ctx context.Context, scope core.StateScope, key string) error {
	return s.client.StateDelete(ctx, scope, key)
}

// StateClear deletes every key of scope (for task state with
// allMapIndices, of every map index of the task in the run); their objects
// go with the sweep.
func (s *State) StateClear(ctx context.Context, scope core.StateScope, allMapIndices bool) error {
	return s.client.StateClear(ctx, scope, allMapIndices)
}
