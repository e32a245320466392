package execclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// AssetStateRequest is the body of PUT .../value: asset state has no
// retention (SPEC AS-1), so a "retention" member is refused.
type AssetStateRequest = TaskStateRequest

// AssetStateResponse is one asset-state entry (GET, and the answer to PUT)
// with who last wrote it (SPEC AS-6: the last_updated_by_* members).
type AssetStateResponse struct {
	AssetName string          `json:"asset_name"`
	AssetURI  string          `json:"asset_uri"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt time.Time       `json:"updated_at"`
	core.StateWriter
}

// TaskAssetsResponse lists the concrete assets a try's task reaches: Inlets
// are its concrete inlets and then the assets its alias inlets resolve to
// now, Outlets its concrete outlets, and Assets both once each, the set
// asset state is available for (SPEC AS-2).
type TaskAssetsResponse struct {
	Inlets  []core.Asset `json:"inlets"`
	Outlets []core.Asset `json:"outlets"`
	Assets  []core.Asset `json:"assets"`
}

// assetStateCall builds a call on the asset-state route of ref (by name, or
// by uri when ref has no name) for op ("value" or "clear").
func assetStateCall(method string, ref core.AssetRef, op, key string) (call, error) {
	q := url.Values{}
	prefix := "by-name"
	switch {
	case ref.Name != "":
		q.Set("name", ref.Name)
	case ref.URI != "":
		prefix = "by-uri"
		q.Set("uri", ref.URI)
	default:
		return call{}, fmt.Errorf("asset state needs an asset name or uri, got %s: %w", ref, core.ErrInvalid)
	}
	if key != "" {
		q.Set("key", key)
	}
	return call{method: method, path: "/store/asset/" + prefix + "/" + op, query: q}, nil
}

// AssetStateEntry returns the entry of key of asset ref with its metadata;
// an error matching core.ErrNotFound when the key is absent (or the asset
// unknown: IsUnknownAsset tells them apart) and core.ErrForbidden when the
// task does not declare the asset.
func (c *Client) AssetStateEntry(ctx context.Context, ref core.AssetRef, key string) (*AssetStateResponse, error) {
	k, err := assetStateCall(http.MethodGet, ref, "value", key)
	if err != nil {
		return nil, err
	}
	var out AssetStateResponse
	k.out = &out
	if err := c.do(ctx, k); err != nil {
		return nil, err
	}
	return &out, nil
}

// AssetStateGet returns the JSON value of key of asset ref.
func (c *Client) AssetStateGet(ctx context.Context, ref core.AssetRef, key string) (json.RawMessage, error) {
	e, err := c.AssetStateEntry(ctx, ref, key)
	if err != nil {
		return nil, err
	}
	return e.Value, nil
}

// AssetStateSet writes value (JSON) under key of asset ref.
func (c *Client) AssetStateSet(ctx context.Context, ref core.AssetRef, key string, value json.RawMessage) error {
	k, err := assetStateCall(http.MethodPut, ref, "value", key)
	if err != nil {
		return err
	}
	k.body, err = json.Marshal(AssetStateRequest{Value: value})
	if err != nil {
		return fmt.Errorf("encode asset state %q: %w", key, err)
	}
	k.contentType = "application/json"
	return c.do(ctx, k)
}

// AssetStateDelete deletes key of asset ref (absent is fine).
func (c *Client) AssetStateDelete(ctx context.Context, ref core.AssetRef, key string) error {
	k, err := assetStateCall(http.MethodDelete, ref, "value", key)
	if err != nil {
		return err
	}
	return c.do(ctx, k)
}

// AssetStateClear deletes every key of asset ref.
func (c *Client) AssetStateClear(ctx context.Context, ref core.AssetRef) error {
	k, err := assetStateCall(http.MethodDelete, ref, "clear", "")
	if err != nil {
		return err
	}
	return c.do(ctx, k)
}

// TaskAssets returns the concrete assets the client's try's task declares.
func (c *Client) TaskAssets(ctx context.Context) (*TaskAssetsResponse, error) {
	if c.Identity.TIID == "" {
		return nil, errors.New("task assets: the client has no task instance id (WEIR_TI_ID)")
	}
	var out TaskAssetsResponse
	if err := c.doJSON(ctx, http.MethodGet, "/task-instances/"+url.PathEscape(c.Identity.TIID)+"/assets", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// IsUnknownAsset reports whether err is the API's answer for an asset that
// does not exist or is inactive (a 404 that is not about a key).
func IsUnknownAsset(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound && e.Problem.Reason == ReasonUnknownAsset
}

// DeclaredAssets returns the concrete assets the client's try's task
// declares as inlets or outlets, once each (SPEC AS-2).
func (c *Client) DeclaredAssets(ctx context.Context) ([]core.Asset, error) {
	ta, err := c.TaskAssets(ctx)
	if err != nil {
		return nil, err
	}
	return ta.Assets, nil
}
