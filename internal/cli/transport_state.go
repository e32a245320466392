package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

// The state-store commands' backend methods, local and REST.

// state is the state service over the local database.
func (b *localBackend) state() *statestore.Service {
	return newStateService(b.cfg, b.svc.Store(), b.svc.Triggers())
}

// StateList implements backend.
func (b *localBackend) StateList(ctx context.Context, p *store.StateListParams, asset string) ([]core.StateEntry, int, error) {
	svc := b.state()
	if asset != "" {
		sc, err := svc.Resolve(ctx, core.AssetScopeByName(asset))
		if err != nil {
			return nil, 0, err
		}
		p = store.ListScope(sc, p.Page)
	}
	return svc.List(ctx, p)
}

// StateGet implements backend; a missing key is worded as the API words it.
func (b *localBackend) StateGet(ctx context.Context, sc core.StateScope, key string) (*core.StateEntry, error) {
	svc := b.state()
	sc, err := svc.Resolve(ctx, sc)
	if err != nil {
		return nil, err
	}
	e, err := svc.Get(ctx, sc, key)
	if errors.Is(err, core.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("no %s state key %q for %s", sc.Kind, key, sc.Describe()))
	}
	return e, err
}

// notFound is an error saying msg (and no more) that wraps core.ErrNotFound.
func notFound(msg string) error { return &wrapped{msg: msg, kind: core.ErrNotFound} }

// wrapped is an error whose message is already in the user's terms and
// which wraps a core sentinel without repeating it.
type wrapped struct {
	msg  string
	kind error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.kind }

// StateDelete implements backend.
func (b *localBackend) StateDelete(ctx context.Context, sc core.StateScope, key string) error {
	return b.state().AdminDelete(ctx, b.actor, sc, key)
}

// StateClear implements backend.
func (b *localBackend) StateClear(ctx context.Context, sc core.StateScope, allMapIndices bool) error {
	return b.state().AdminClear(ctx, b.actor, sc, allMapIndices)
}

// statePath is the API's state-store collection of a scope (an asset
// named by its name is looked up first) and the query naming its map index.
func (b *restBackend) statePath(ctx context.Context, sc core.StateScope) (string, url.Values, error) {
	if err := sc.Validate(); err != nil {
		return "", nil, err
	}
	if sc.Kind == core.StateTask {
		q := url.Values{"map_index": {strconv.Itoa(sc.MapIndex)}}
		return "/dags/" + seg(sc.DagID) + "/dagRuns/" + seg(sc.RunID) + "/taskInstances/" + seg(sc.TaskID) + "/state-store", q, nil
	}
	id := sc.AssetID
	if id == 0 {
		var out api.AssetCollection
		q := url.Values{"name_pattern": {sc.AssetName}, "only_active": {"false"}, "limit": {"1000"}}
		if err := b.c.Get(ctx, "/assets", q, &out); err != nil {
			return "", nil, err
		}
		for _, a := range out.Assets {
			if a.Name == sc.AssetName {
				id = a.ID
			}
		}
		if id == 0 {
			return "", nil, fmt.Errorf("%s: %w", sc.Describe(), core.ErrNotFound)
		}
	}
	return "/assets/" + strconv.FormatInt(id, 10) + "/state-store", url.Values{}, nil
}

// StateList implements backend: the API lists one task instance's or one
// asset's state.
func (b *restBackend) StateList(ctx context.Context, p *store.StateListParams, asset string) ([]core.StateEntry, int, error) {
	sc := core.AssetScopeByName(asset)
	if asset == "" {
		if p.DagID == "" || p.RunID == "" || p.TaskID == "" {
			return nil, 0, fmt.Errorf("through the REST API state-store list needs --dag, --run and --task (one task instance) "+
				"or --asset; listing a whole DAG's or run's task state needs the local database: %w", core.ErrInvalid)
		}
		mi := core.NoMapIndex
		if p.MapIndex != nil {
			mi = *p.MapIndex
		}
		sc = core.TaskScope(p.DagID, p.RunID, p.TaskID, mi)
	}
	path, q, err := b.statePath(ctx, sc)
	if err != nil {
		return nil, 0, err
	}
	for k, v := range pageQuery(p.Page) {
		q[k] = v
	}
	var out api.StateCollection
	err = b.c.Get(ctx, path, q, &out)
	return out.Entries, out.TotalEntries, err
}

// StateGet implements backend.
func (b *restBackend) StateGet(ctx context.Context, sc core.StateScope, key string) (*core.StateEntry, error) {
	path, q, err := b.statePath(ctx, sc)
	if err != nil {
		return nil, err
	}
	var e core.StateEntry
	if err := b.c.Get(ctx, path+"/"+seg(key), q, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// StateDelete implements backend.
func (b *restBackend) StateDelete(ctx context.Context, sc core.StateScope, key string) error {
	path, q, err := b.statePath(ctx, sc)
	if err != nil {
		return err
	}
	return b.c.Do(ctx, http.MethodDelete, path+"/"+seg(key), q, nil, nil)
}

// StateClear implements backend.
func (b *restBackend) StateClear(ctx context.Context, sc core.StateScope, allMapIndices bool) error {
	path, q, err := b.statePath(ctx, sc)
	if err != nil {
		return err
	}
	if allMapIndices {
		q.Set("all_map_indices", "true")
	}
	return b.c.Do(ctx, http.MethodDelete, path, q, nil, nil)
}
