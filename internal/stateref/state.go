package stateref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/objstore"
)

// State is a try's state, of every kind, through the worker-side backend:
// the Execution API client's state methods, with every value kept in an
// object store under its reference (task/... for the try's task instance,
// asset/<name>/... for an asset) and only the reference in the database.
// An asset named by uri is first resolved to its name, so the name and the
// uri of one asset reach the same object. It satisfies operator.State.
type State struct {
	client *execclient.Client
	store  objstore.Store
	log    *slog.Logger
}

// New wraps c, a client holding a try's identity, so that the state values
// it writes live in st. Failed object deletes are reported on log (nil =
// discarded). Task state needs the identity's dag, run and task: New
// refuses a client without them.
func New(c *execclient.Client, st objstore.Store, log *slog.Logger) (*State, error) {
	id := c.Identity
	if id.DagID == "" || id.RunID == "" || id.TaskID == "" {
		return nil, fmt.Errorf("state backend: the client does not name its task instance (dag %q, run %q, task %q; set %s, %s and %s)",
			id.DagID, id.RunID, id.TaskID, execclient.EnvDagID, execclient.EnvRunID, execclient.EnvTaskID)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &State{client: c, store: st, log: log}, nil
}

// objects is the object side for scope's kind.
func (s *State) objects(scope core.StateScope) objects {
	return objects{store: s.store, log: s.log, what: string(scope.Kind) + " state"}
}

// DeclaredAssets lists the task's concrete inlets and outlets, once each.
func (s *State) DeclaredAssets(ctx context.Context) ([]core.Asset, error) {
	return s.client.DeclaredAssets(ctx)
}

// Ref returns the reference of key in scope: the client's task instance
// for task state, the asset scope names by name for asset state.
func (s *State) Ref(scope core.StateScope, key string) string {
	if scope.Kind == core.StateAsset {
		return AssetRef(scope.AssetName, key)
	}
	return TaskRef(s.client.Identity, key)
}

// StateSet writes value to the object store under key's reference, then
// stores the reference (with retention, for task state) through the
// Execution API. A failure between the two leaves an object no row points
// to; the next set of key overwrites it, as the reference is the same.
//
// The API is asked first whether this try may write the scope: for task
// state a read of key, for asset state the task's declared assets (an
// undeclared asset is refused with core.ErrForbidden, and an asset named
// by uri is resolved to its name). A finished, replaced or foreign try is
// thus refused before its value could overwrite the object an existing
// row points to (docs/state-backends.md).
func (s *State) StateSet(ctx context.Context, scope core.StateScope, key string, value json.RawMessage, retention string) error {
	scope, err := s.writable(ctx, scope, key)
	if err != nil {
		return err
	}
	ref, err := s.objects(scope).put(ctx, key, value, s.Ref(scope, key))
	if err != nil {
		return err
	}
	return s.client.StateSet(ctx, scope, key, ref, retention)
}

// writable is StateSet's question to the API; it returns the scope to
// write (an asset by its name).
func (s *State) writable(ctx context.Context, scope core.StateScope, key string) (core.StateScope, error) {
	if scope.Kind == core.StateAsset {
		name, err := s.declaredName(ctx, scope)
		return core.AssetScopeByName(name), err
	}
	if _, err := s.client.StateGet(ctx, scope, key); err != nil && !errors.Is(err, core.ErrNotFound) {
		return scope, err
	}
	return scope, nil
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
	if scope.Kind == core.StateAsset {
		scope = core.AssetScopeByName(e.Scope.AssetName)
	}
	return s.objects(scope).follow(ctx, key, e.Value, s.Ref(scope, key))
}

// StateDelete deletes key's row, then its object. A failed object delete is
// logged, not returned: the key is gone, and the next set of it overwrites
// the orphaned object.
func (s *State) StateDelete(ctx context.Context, scope core.StateScope, key string) error {
	if err := s.client.StateDelete(ctx, scope, key); err != nil {
		return err
	}
	if scope, ok := s.named(ctx, scope); ok {
		s.objects(scope).remove(ctx, s.Ref(scope, key))
	}
	return nil
}

// StateClear deletes the rows of scope (for task state with allMapIndices,
// of every map index of the task in the run), then every object under the
// scope's prefix. Failed object deletes are logged, as in StateDelete.
func (s *State) StateClear(ctx context.Context, scope core.StateScope, allMapIndices bool) error {
	if err := s.client.StateClear(ctx, scope, allMapIndices); err != nil {
		return err
	}
	scope, ok := s.named(ctx, scope)
	if !ok {
		return nil
	}
	prefix := TaskPrefix(s.client.Identity, allMapIndices)
	if scope.Kind == core.StateAsset {
		prefix = AssetPrefix(scope.AssetName)
	}
	s.objects(scope).removePrefix(ctx, prefix)
	return nil
}

// named returns scope with an asset named by name, after the API has just
// deleted its rows: the scope's name, or the declared asset with its uri. A
// failed lookup is logged (the objects stay until each key is set again).
func (s *State) named(ctx context.Context, scope core.StateScope) (core.StateScope, bool) {
	if scope.Kind != core.StateAsset || scope.AssetName != "" {
		return scope, true
	}
	name, err := s.declaredName(ctx, scope)
	if err != nil {
		s.log.Warn("asset state deleted, but the asset's name could not be resolved to delete its objects; "+
			"they stay until each key is set again", "asset", scope.Describe(), "err", err)
		return scope, false
	}
	return core.AssetScopeByName(name), true
}

// declaredName returns the name of the asset scope names (by name, else by
// uri) among the concrete assets the task declares. An asset the task does
// not declare is refused with core.ErrForbidden before anything is
// written, as the API would refuse its write.
func (s *State) declaredName(ctx context.Context, scope core.StateScope) (string, error) {
	if scope.AssetName == "" && scope.AssetURI == "" {
		return "", fmt.Errorf("asset state needs an asset name or uri: %w", core.ErrInvalid)
	}
	declared, err := s.client.DeclaredAssets(ctx)
	if err != nil {
		return "", fmt.Errorf("resolve %s among the task's assets: %w", scope.Describe(), err)
	}
	names := make([]string, len(declared))
	for i, d := range declared {
		if scope.AssetName != "" && d.Name == scope.AssetName || scope.AssetName == "" && d.URI == scope.AssetURI {
			return d.Name, nil
		}
		names[i] = strconv.Quote(d.Name)
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return "", fmt.Errorf("task %s may not write the state of %s: it is not one of the task's inlets or outlets (declared: %s): %w",
		s.client.Identity.TaskID, scope.Describe(), list, core.ErrForbidden)
}
