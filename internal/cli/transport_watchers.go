package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// The asset watcher commands' backend methods, local and REST.

// WatcherList implements backend.
func (b *localBackend) WatcherList(ctx context.Context, asset string) ([]core.Watcher, error) {
	var id int64
	if asset != "" {
		x, err := assetByName(ctx, b.svc.Store(), asset)
		if err != nil {
			return nil, err
		}
		id = x.ID
	}
	return b.svc.AssetWatchers(ctx, id, aliveThreshold)
}

// WatcherSetCursor implements backend.
func (b *localBackend) WatcherSetCursor(ctx context.Context, asset, watcher string, raw []byte) (*core.Watcher, error) {
	x, err := assetByName(ctx, b.svc.Store(), asset)
	if err != nil {
		return nil, err
	}
	return b.svc.SetWatcherCursor(ctx, b.state(), b.actor, x.ID, watcher, raw, aliveThreshold)
}

// WatcherList implements backend: the API lists one asset's watchers.
func (b *restBackend) WatcherList(ctx context.Context, asset string) ([]core.Watcher, error) {
	if asset == "" {
		return nil, fmt.Errorf("through the REST API assets watchers needs an ASSET (the API lists one asset's watchers); "+
			"listing every asset's needs the local database: %w", core.ErrInvalid)
	}
	id, err := b.assetID(ctx, asset)
	if err != nil {
		return nil, err
	}
	var out api.WatcherCollection
	err = b.c.Get(ctx, "/assets/"+strconv.FormatInt(id, 10)+"/watchers", nil, &out)
	return out.Watchers, err
}

// WatcherSetCursor implements backend (PUT, or with raw nil DELETE,
// /assets/{asset_id}/watchers/{watcher_name}/cursor).
func (b *restBackend) WatcherSetCursor(ctx context.Context, asset, watcher string, raw []byte) (*core.Watcher, error) {
	id, err := b.assetID(ctx, asset)
	if err != nil {
		return nil, err
	}
	path := "/assets/" + strconv.FormatInt(id, 10) + "/watchers/" + seg(watcher) + "/cursor"
	var out core.Watcher
	if raw == nil {
		err = b.c.Do(ctx, http.MethodDelete, path, nil, nil, &out)
	} else {
		err = b.c.Do(ctx, http.MethodPut, path, nil, map[string]json.RawMessage{"value": raw}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
