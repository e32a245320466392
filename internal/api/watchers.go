package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
)

// WatcherCollection is an asset's watchers.
type WatcherCollection struct {
	Watchers     []core.Watcher `json:"watchers"`
	TotalEntries int            `json:"total_entries"`
}

// WatcherParam names one watcher of an asset.
type WatcherParam struct {
	AssetID int64  `path:"asset_id" doc:"asset id"`
	Name    string `path:"watcher_name" doc:"the watcher's name"`
}

type setCursorInput struct {
	WatcherParam
	RawBody []byte `contentType:"application/json" doc:"{\"value\": <the new cursor: any JSON but null>}"`
}

// registerWatchers serves an asset's watchers: their health, and setting
// or resetting a cursor (docs/watchers.md#health).
func (s *server) registerWatchers() {
	tags := []string{"Asset"}
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_watchers", Method: http.MethodGet, Path: Prefix + "/assets/{asset_id}/watchers", Tags: tags,
		Summary: "List an asset's watchers with their health",
		Description: "Each watcher's trigger (kwargs with secrets masked), the triggerer running it and whether it is alive, " +
			"the last poll (time, duration), the last event, the number of events, the last error and how many polls " +
			"in a row failed, and the committed cursor.",
		Errors: []int{http.StatusNotFound},
	}, func(ctx context.Context, in *AssetStateParam) (*struct{ Body WatcherCollection }, error) {
		if _, err := s.st.AssetGet(ctx, in.AssetID); err != nil {
			return nil, s.problem(ctx, fmt.Errorf("asset %d: %w", in.AssetID, err))
		}
		ws, err := s.svc.AssetWatchers(ctx, in.AssetID, s.cfg.SchedulerHealthThreshold)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		return &struct{ Body WatcherCollection }{WatcherCollection{Watchers: nonNil(ws), TotalEntries: len(ws)}}, nil
	})
	set := huma.Operation{
		OperationID: "set_asset_watcher_cursor", Method: http.MethodPut,
		Path: Prefix + "/assets/{asset_id}/watchers/{watcher_name}/cursor", Tags: tags,
		Summary: "Set a watcher's cursor",
		Description: "Sets the cursor the watcher's next poll starts from (to re-process, or to skip ahead): an audited " +
			"asset-state edit; a poll in flight cannot overwrite it. The body is {\"value\": <JSON>}.",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound}, MaxBodyBytes: s.states.MaxBodyBytes(), SkipValidateBody: true,
	}
	register(s, statestore.EditRole, set, func(ctx context.Context, in *setCursorInput) (*struct{ Body core.Watcher }, error) {
		var body struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(in.RawBody, &body); err != nil || body.Value == nil {
			return nil, invalid("body: want {\"value\": <the new cursor, any JSON but null>}")
		}
		if string(body.Value) == "null" {
			return nil, invalid("body: the cursor cannot be null; DELETE the cursor to reset it")
		}
		return s.setCursor(ctx, in.WatcherParam, body.Value)
	})
	register(s, statestore.EditRole, huma.Operation{
		OperationID: "reset_asset_watcher_cursor", Method: http.MethodDelete,
		Path: Prefix + "/assets/{asset_id}/watchers/{watcher_name}/cursor", Tags: tags,
		Summary:     "Reset a watcher's cursor",
		Description: "Deletes the cursor: the watcher's next poll starts from the beginning. Audited.",
		Errors:      []int{http.StatusNotFound},
	}, func(ctx context.Context, in *WatcherParam) (*struct{ Body core.Watcher }, error) {
		return s.setCursor(ctx, *in, nil)
	})
}

func (s *server) setCursor(ctx context.Context, in WatcherParam, value json.RawMessage) (*struct{ Body core.Watcher }, error) {
	w, err := s.svc.SetWatcherCursor(ctx, s.states, actor(ctx), in.AssetID, in.Name, value, s.cfg.SchedulerHealthThreshold)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.Watcher }{*w}, nil
}
