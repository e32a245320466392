package execclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
)

// StoreRequest is the body of a PUT on a /store route (a state key), of
// either kind. Retention is
// "6h", "7d", "never", or absent for [state_store] default_retention_days
// (task state only: asset state refuses one); the server computes
// expires_at with its own clock at the time of the write. Both kinds answer
// a core.StateEntry.
type StoreRequest struct {
	Value     json.RawMessage `json:"value"`
	Retention json.RawMessage `json:"retention,omitempty"`
}

// TaskAssetsResponse lists the concrete assets a try's task reaches: Inlets
// are its concrete inlets and then the assets its alias inlets resolve to
// now, Outlets its concrete outlets, and Assets both once each, the set
// asset state is available for (docs/asset-state.md).
type TaskAssetsResponse struct {
	Inlets  []core.Asset `json:"inlets"`
	Outlets []core.Asset `json:"outlets"`
	Assets  []core.Asset `json:"assets"`
}

// TaskScope is the task-state scope of the client's task instance, from
// its identity.
func (c *Client) TaskScope() core.StateScope {
	id := c.Identity
	return core.TaskScope(id.DagID, id.RunID, id.TaskID, id.MapIndex)
}

// stateCall builds the call on scope's route for key ("" = the clear of
// the whole scope): the client's own task instance for a task scope
// (/store/ti/{id}/{key}), an asset by name or uri for an asset scope
// (/store/asset/by-name/value/{key}?name=...).
func (c *Client) stateCall(method string, scope core.StateScope, key string) (call, error) {
	switch scope.Kind {
	case core.StateTask:
		if c.Identity.TIID == "" {
			return call{}, errors.New("task state: the client has no task instance id (WEIR_TI_ID)")
		}
		p := "/store/ti/" + url.PathEscape(c.Identity.TIID)
		if key != "" {
			p += "/" + url.PathEscape(key)
		}
		return call{method: method, path: p}, nil
	case core.StateAsset:
		q, prefix := url.Values{}, "/store/asset/by-name"
		switch {
		case scope.AssetName != "":
			q.Set("name", scope.AssetName)
		case scope.AssetURI != "":
			prefix = "/store/asset/by-uri"
			q.Set("uri", scope.AssetURI)
		default:
			return call{}, fmt.Errorf("asset state needs an asset name or uri: %w", core.ErrInvalid)
		}
		p := prefix + "/clear"
		if key != "" {
			p = prefix + "/value/" + url.PathEscape(key)
		}
		return call{method: method, path: p, query: q}, nil
	}
	return call{}, scope.Validate()
}

// keyCall is stateCall for one key. A key the server would refuse is
// refused here, before a request: "." or ".." could not even be sent as a
// path segment, and "" would name the whole scope.
func (c *Client) keyCall(method string, scope core.StateScope, key string) (call, error) {
	if err := statevalue.CheckKey(key); err != nil {
		return call{}, err
	}
	return c.stateCall(method, scope, key)
}

// StateEntry returns the entry of key in scope with its metadata: an error
// matching core.ErrNotFound when the key is absent (or the asset unknown:
// IsUnknownAsset tells them apart) and core.ErrForbidden when the try may
// not reach the scope (an asset its task does not declare).
func (c *Client) StateEntry(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error) {
	k, err := c.keyCall(http.MethodGet, scope, key)
	if err != nil {
		return nil, err
	}
	var out core.StateEntry
	k.out = &out
	if err := c.do(ctx, k); err != nil {
		return nil, err
	}
	return &out, nil
}

// StateGet returns the JSON value of key in scope (see StateEntry).
func (c *Client) StateGet(ctx context.Context, scope core.StateScope, key string) (json.RawMessage, error) {
	e, err := c.StateEntry(ctx, scope, key)
	if err != nil {
		return nil, err
	}
	return e.Value, nil
}

// StateSet writes value (JSON) under key in scope, with retention for task
// state ("" = the server's default, "never", or a duration such as "6h" or
// "7d").
func (c *Client) StateSet(ctx context.Context, scope core.StateScope, key string, value json.RawMessage, retention string) error {
	k, err := c.keyCall(http.MethodPut, scope, key)
	if err != nil {
		return err
	}
	req := StoreRequest{Value: value}
	if retention != "" {
		if req.Retention, err = json.Marshal(retention); err != nil {
			return err
		}
	}
	if k.body, err = json.Marshal(req); err != nil {
		return fmt.Errorf("encode %s state %q: %w", scope.Kind, key, err)
	}
	k.contentType = "application/json"
	return c.do(ctx, k)
}

// StateDelete deletes key in scope (absent is fine).
func (c *Client) StateDelete(ctx context.Context, scope core.StateScope, key string) error {
	k, err := c.keyCall(http.MethodDelete, scope, key) // refuses "" (not a clear)
	if err != nil {
		return err
	}
	return c.do(ctx, k)
}

// StateClear deletes every key of scope (for task state with
// allMapIndices, of every map index of the task in the run).
func (c *Client) StateClear(ctx context.Context, scope core.StateScope, allMapIndices bool) error {
	k, err := c.stateCall(http.MethodDelete, scope, "")
	if err != nil {
		return err
	}
	if allMapIndices {
		k.query = url.Values{"all_map_indices": {"true"}}
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

// DeclaredAssets returns the concrete assets the client's try's task
// declares as inlets or outlets, once each.
func (c *Client) DeclaredAssets(ctx context.Context) ([]core.Asset, error) {
	ta, err := c.TaskAssets(ctx)
	if err != nil {
		return nil, err
	}
	return ta.Assets, nil
}

// IsUnknownAsset reports whether err is the API's answer for an asset that
// does not exist or is inactive (a 404 that is not about a key).
func IsUnknownAsset(err error) bool {
	return hasReason(err, http.StatusNotFound, ReasonUnknownAsset)
}

// IsWrongWorker reports whether err is the api-server's 403 for a worker
// whose name is not its credential's (not any 403: a proxy's is not final).
func IsWrongWorker(err error) bool { return hasReason(err, http.StatusForbidden, ReasonWrongWorker) }

// hasReason reports whether err is the api-server's answer status with
// reason.
func hasReason(err error, status int, reason string) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status && e.Problem.Reason == reason
}
