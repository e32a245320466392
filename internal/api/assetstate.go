package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

// AssetStateEntry is one asset-state key with its value and who last wrote
// it (SPEC AS-6): last_updated_by_kind is task (with the try's dag, run,
// task, map index and try), user (with the username), api or watcher.
type AssetStateEntry struct {
	AssetID   int64           `json:"asset_id"`
	AssetName string          `json:"asset_name"`
	AssetURI  string          `json:"asset_uri"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt time.Time       `json:"updated_at"`
	store.StateWriter
}

// AssetStateCollection lists an asset's keys.
type AssetStateCollection struct {
	Entries      []AssetStateEntry `json:"entries"`
	TotalEntries int               `json:"total_entries"`
}

// AssetStateParam names an asset's state.
type AssetStateParam struct {
	AssetID int64 `path:"asset_id" doc:"asset id"`
}

// AssetStateKeyParam names one state key of an asset.
type AssetStateKeyParam struct {
	AssetStateParam
	Key string `path:"key" doc:"state key"`
}

type setAssetStateInput struct {
	AssetStateKeyParam
	RawBody []byte `contentType:"application/json" doc:"{\"value\": <any JSON but null>} (asset state has no retention)"`
}

func (s *server) registerAssetState() {
	tags := []string{"Asset State"}
	base := Prefix + "/assets/{asset_id}/state-store"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_state_entries", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "List an asset's state with metadata", Errors: []int{http.StatusNotFound},
	}, s.listAssetState)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_state_entry", Method: http.MethodGet, Path: base + "/{key}", Tags: tags,
		Summary: "Get one asset state key", Errors: []int{http.StatusNotFound},
	}, s.getAssetState)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "set_asset_state_entry", Method: http.MethodPut, Path: base + "/{key}", Tags: tags,
		Summary:      "Set one asset state key",
		Description:  "The body is {\"value\": <JSON>}; asset state has no retention. Recorded as written by the user. Audited.",
		MaxBodyBytes: s.states.MaxBodyBytes(),
		// statestore checks the body and names NaN, null or the size limit.
		SkipValidateBody: true,
		Errors:           []int{http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge},
	}, s.setAssetState)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "delete_asset_state_entry", Method: http.MethodDelete, Path: base + "/{key}", Tags: tags,
		Summary: "Delete one asset state key (absent is fine); audited", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusNotFound},
	}, s.deleteAssetState)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "clear_asset_state", Method: http.MethodDelete, Path: base, Tags: tags,
		Summary: "Clear an asset's state; audited", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusNotFound},
	}, s.clearAssetState)
}

// assetStateScope checks that the asset exists (active or not: operators
// may inspect and clean up an inactive asset's state) and returns its scope.
func (s *server) assetStateScope(ctx context.Context, in *AssetStateParam) (statestore.AssetScope, error) {
	a, err := s.states.ResolveAsset(ctx, statestore.AssetScope{AssetID: in.AssetID})
	if err != nil {
		return statestore.AssetScope{}, s.problem(ctx, err)
	}
	return statestore.AssetScope{AssetID: a.ID, Name: a.Name, URI: a.URI}, nil
}

func assetStateEntry(sc statestore.AssetScope, e *statestore.Entry) AssetStateEntry {
	b := e.UpdatedBy
	return AssetStateEntry{AssetID: sc.AssetID, AssetName: sc.Name, AssetURI: sc.URI, Key: e.Key, Value: e.Value,
		UpdatedAt: e.UpdatedAt, StateWriter: store.StateWriter{Kind: b.Kind, DagID: b.DagID, RunID: b.RunID,
			TaskID: b.TaskID, MapIndex: b.MapIndex, TryNumber: b.TryNumber, User: b.User}}
}

func (s *server) listAssetState(ctx context.Context, in *AssetStateParam) (*struct{ Body AssetStateCollection }, error) {
	sc, err := s.assetStateScope(ctx, in)
	if err != nil {
		return nil, err
	}
	rows, err := s.states.AssetList(ctx, sc.AssetID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	out := AssetStateCollection{Entries: make([]AssetStateEntry, len(rows)), TotalEntries: len(rows)}
	for i, r := range rows {
		out.Entries[i] = AssetStateEntry{AssetID: r.AssetID, AssetName: r.AssetName, AssetURI: r.AssetURI, Key: r.Key,
			Value: r.Value, UpdatedAt: r.UpdatedAt, StateWriter: r.UpdatedBy}
	}
	return &struct{ Body AssetStateCollection }{out}, nil
}

func (s *server) getAssetState(ctx context.Context, in *AssetStateKeyParam) (*struct{ Body AssetStateEntry }, error) {
	sc, err := s.assetStateScope(ctx, &in.AssetStateParam)
	if err != nil {
		return nil, err
	}
	e, err := s.states.Get(ctx, sc, in.Key)
	if errors.Is(err, core.ErrNotFound) {
		return nil, huma.NewError(http.StatusNotFound, fmt.Sprintf("no asset state key %q for asset %q", in.Key, sc.Name))
	}
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body AssetStateEntry }{assetStateEntry(sc, e)}, nil
}

func (s *server) setAssetState(ctx context.Context, in *setAssetStateInput) (*struct{ Body AssetStateEntry }, error) {
	sc, err := s.assetStateScope(ctx, &in.AssetStateParam)
	if err != nil {
		return nil, err
	}
	body, ret, err := s.parseStateBody(ctx, in.RawBody)
	if err != nil {
		return nil, err
	}
	user := ""
	if p := PrincipalFrom(ctx); p != nil {
		user = p.Username
	}
	e, err := s.states.Set(ctx, sc, in.Key, body.Value, ret, statestore.UserWriter(user))
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "asset_state.set", sc.Name, "key="+in.Key)
	return &struct{ Body AssetStateEntry }{assetStateEntry(sc, e)}, nil
}

func (s *server) deleteAssetState(ctx context.Context, in *AssetStateKeyParam) (*struct{}, error) {
	sc, err := s.assetStateScope(ctx, &in.AssetStateParam)
	if err != nil {
		return nil, err
	}
	if err := s.states.Delete(ctx, sc, in.Key); err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "asset_state.delete", sc.Name, "key="+in.Key)
	return nil, nil
}

func (s *server) clearAssetState(ctx context.Context, in *AssetStateParam) (*struct{}, error) {
	sc, err := s.assetStateScope(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := s.states.Clear(ctx, sc, false); err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "asset_state.clear", sc.Name, "")
	return nil, nil
}
