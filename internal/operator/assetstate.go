package operator

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weirflow/weir/internal/core"
)

// AssetState is a try's access to the state of the assets its task declares
// (an execclient.Client satisfies it). Values are JSON; ref names an asset by
// Name or URI.
type AssetState interface {
	AssetStateGet(ctx context.Context, ref core.AssetRef, key string) (json.RawMessage, error)
	AssetStateSet(ctx context.Context, ref core.AssetRef, key string, value json.RawMessage) error
	AssetStateDelete(ctx context.Context, ref core.AssetRef, key string) error
	AssetStateClear(ctx context.Context, ref core.AssetRef) error
	// DeclaredAssets lists the task's concrete inlets and outlets, once each.
	DeclaredAssets(ctx context.Context) ([]core.Asset, error)
}

// errNoAssetState is returned when a try runs without an Execution API client.
var errNoAssetState = errors.New("asset state: no Execution API client")

// assetStateOf returns the request's asset state access: req.AssetState
// when set, else the worker's XCom client, the try's Execution API client,
// which serves asset state too.
func assetStateOf(req *Request) AssetState {
	if req.AssetState != nil {
		return req.AssetState
	}
	as, _ := req.XCom.(AssetState)
	return as
}

// AssetState returns the try's asset state access (through the worker-side
// backend when one is configured); calls fail with an error when the try
// has no Execution API client.
func (tc TaskContext) AssetState() AssetState {
	if tc.assets != nil {
		return tc.assets
	}
	if as, ok := tc.xcom.(AssetState); ok {
		return as
	}
	return noAssetState{}
}

// noAssetState answers every call with errNoAssetState.
type noAssetState struct{}

func (noAssetState) AssetStateGet(context.Context, core.AssetRef, string) (json.RawMessage, error) {
	return nil, errNoAssetState
}
func (noAssetState) AssetStateSet(context.Context, core.AssetRef, string, json.RawMessage) error {
	return errNoAssetState
}
func (noAssetState) AssetStateDelete(context.Context, core.AssetRef, string) error {
	return errNoAssetState
}
func (noAssetState) AssetStateClear(context.Context, core.AssetRef) error { return errNoAssetState }
func (noAssetState) DeclaredAssets(context.Context) ([]core.Asset, error) {
	return nil, errNoAssetState
}
