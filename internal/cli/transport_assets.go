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
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// The asset commands' backend methods (weir assets show, events, aliases,
// events create), weir runs callbacks' and weir tasks expansion's, local
// and REST.

// noAsset is the error of an asset name nothing defines, the same on both
// transports.
func noAsset(name string) error {
	return &wrapped{msg: fmt.Sprintf("no asset named %q (see weir assets list --all)", name), kind: core.ErrNotFound}
}

// AssetGetByName implements backend.
func (b *localBackend) AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error) {
	x, err := assetByName(ctx, b.svc.Store(), name)
	if err != nil {
		return nil, err
	}
	return b.svc.Store().AssetGet(ctx, x.ID)
}

// AssetEventList implements backend.
func (b *localBackend) AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, int, error) {
	return store.List(ctx, p, b.svc.Store().AssetEventList, b.svc.Store().AssetEventCount)
}

// AssetEventCreate implements backend.
func (b *localBackend) AssetEventCreate(ctx context.Context, assetID int64, r emission.Request) (*api.CreatedAssetEvent, error) {
	ev, dup, err := b.svc.CreateAssetEvent(ctx, b.actor, assetID, r)
	if err != nil {
		return nil, err
	}
	return &api.CreatedAssetEvent{AssetEventResponse: api.AssetEventResponse{AssetEvent: *ev}, Duplicate: dup}, nil
}

// AssetAliasList implements backend.
func (b *localBackend) AssetAliasList(ctx context.Context, p *store.AssetAliasListParams) ([]store.AssetAlias, int, error) {
	return store.List(ctx, p, b.svc.Store().AssetAliasList, b.svc.Store().AssetAliasCount)
}

// AssetAliasGet implements backend.
func (b *localBackend) AssetAliasGet(ctx context.Context, name string) (*store.AssetAlias, error) {
	return b.svc.Store().AssetAliasGet(ctx, name)
}

// CallbackList implements backend.
func (b *localBackend) CallbackList(ctx context.Context, dagID, runID string, p *store.CallbackListParams) ([]core.Callback, int, error) {
	run, err := b.svc.Store().DagRunGet(ctx, dagID, runID) // worded as the API words it
	if err != nil {
		return nil, 0, err
	}
	p.DagRunID = run.ID
	return store.List(ctx, p, b.svc.Store().CallbackList, b.svc.Store().CallbackCount)
}

// AssetGetByName implements backend: the asset's id by its name (GET
// /assets?name_pattern=), then the asset (GET /assets/{asset_id}).
func (b *restBackend) AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error) {
	id, err := b.assetID(ctx, name)
	if err != nil {
		return nil, err
	}
	var x core.AssetModel
	if err := b.c.Get(ctx, "/assets/"+strconv.FormatInt(id, 10), nil, &x); err != nil {
		return nil, err
	}
	return &x, nil
}

// assetID finds the id of the asset named name, active or not.
func (b *restBackend) assetID(ctx context.Context, name string) (int64, error) {
	var out api.AssetCollection
	q := url.Values{"name_pattern": {name}, "only_active": {"false"}, "limit": {"1000"}}
	if err := b.c.Get(ctx, "/assets", q, &out); err != nil {
		return 0, err
	}
	for _, a := range out.Assets {
		if a.Name == name {
			return a.ID, nil
		}
	}
	return 0, noAsset(name)
}

// AssetEventList implements backend (GET /assets/events).
func (b *restBackend) AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, int, error) {
	q := pageQuery(p.Page)
	if p.AssetID != 0 {
		q.Set("asset_id", strconv.FormatInt(p.AssetID, 10))
	}
	if p.PartitionKey != "" {
		q.Set("partition_key", p.PartitionKey)
	}
	var out api.AssetEventCollection
	err := b.c.Get(ctx, "/assets/events", q, &out)
	return out.Events(), out.TotalEntries, err
}

// AssetEventCreate implements backend (POST /assets/events).
func (b *restBackend) AssetEventCreate(ctx context.Context, assetID int64, r emission.Request) (*api.CreatedAssetEvent, error) {
	body := api.AssetEventBody{AssetID: assetID, Extra: r.Extra, PartitionKey: r.PartitionKey, PartitionDate: r.PartitionDate,
		IdempotencyKey: r.IdempotencyKey}
	var out api.CreatedAssetEvent
	if err := b.c.Do(ctx, http.MethodPost, "/assets/events", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AssetAliasList implements backend (GET /assets/aliases).
func (b *restBackend) AssetAliasList(ctx context.Context, p *store.AssetAliasListParams) ([]store.AssetAlias, int, error) {
	var out api.AssetAliasCollection
	err := b.c.Get(ctx, "/assets/aliases", pageQuery(p.Page), &out)
	return out.AssetAliases, out.TotalEntries, err
}

// AssetAliasGet implements backend (GET /assets/aliases/{alias_name}).
func (b *restBackend) AssetAliasGet(ctx context.Context, name string) (*store.AssetAlias, error) {
	var out store.AssetAlias
	if err := b.c.Get(ctx, "/assets/aliases/"+seg(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CallbackList implements backend (GET .../dagRuns/{dag_run_id}/callbacks).
func (b *restBackend) CallbackList(ctx context.Context, dagID, runID string, p *store.CallbackListParams) ([]core.Callback, int, error) {
	q := pageQuery(p.Page)
	if p.TaskID != "" {
		q.Set("task_id", p.TaskID)
	}
	var out api.CallbackCollection
	err := b.c.Get(ctx, "/dags/"+seg(dagID)+"/dagRuns/"+seg(runID)+"/callbacks", q, &out)
	return out.Callbacks, out.TotalEntries, err
}

// aliasNotFound words a missing alias the same on both transports.
func aliasNotFound(name string, err error) error {
	if errors.Is(err, core.ErrNotFound) {
		return &wrapped{msg: fmt.Sprintf("no asset alias %q: no DAG declares it and no task added to it (see weir assets aliases)", name),
			kind: core.ErrNotFound}
	}
	return err
}

// Stream implements backend.
func (b *localBackend) Stream(ctx context.Context, id string) (*core.Stream, error) {
	return b.svc.Store().StreamGet(ctx, id) // its error names the stream, as the REST API's
}

// Stream implements backend (GET /streams/{stream_id}).
func (b *restBackend) Stream(ctx context.Context, id string) (*core.Stream, error) {
	var out core.Stream
	if err := b.c.Get(ctx, "/streams/"+seg(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Expansion implements backend.
func (b *localBackend) Expansion(ctx context.Context, dagID, runID, taskID string) (*service.Expansion, error) {
	return b.svc.Expansion(ctx, dagID, runID, taskID)
}

// Expansion implements backend (GET .../taskInstances/{task_id}/expansion).
func (b *restBackend) Expansion(ctx context.Context, dagID, runID, taskID string) (*service.Expansion, error) {
	var out service.Expansion
	path := "/dags/" + seg(dagID) + "/dagRuns/" + seg(runID) + "/taskInstances/" + seg(taskID) + "/expansion"
	if err := b.c.Get(ctx, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AssetMaterialize implements backend.
func (b *localBackend) AssetMaterialize(ctx context.Context, assetID int64) (*core.DagRun, error) {
	return b.svc.MaterializeAsset(ctx, b.actor, assetID)
}

// AssetMaterialize implements backend (POST /assets/{asset_id}/materialize).
func (b *restBackend) AssetMaterialize(ctx context.Context, assetID int64) (*core.DagRun, error) {
	var run api.DAGRunResponse
	if err := b.c.Do(ctx, http.MethodPost, "/assets/"+strconv.FormatInt(assetID, 10)+"/materialize", nil, nil, &run); err != nil {
		return nil, err
	}
	return &run.DagRun, nil
}
