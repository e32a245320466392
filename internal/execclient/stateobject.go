package execclient

import (
	"context"
	"net/http"

	"github.com/weirflow/weir/internal/core"
)

// StateObjectResponse answers POST .../object on a state key's route: a
// new object reference for the key (docs/state-backends.md#sweeping), and
// the scope it belongs to, an asset by its name.
type StateObjectResponse struct {
	Ref   string          `json:"ref"`
	Scope core.StateScope `json:"scope"`
}

// StateObjectsClaimRequest is the body of POST /state-objects/claim.
type StateObjectsClaimRequest struct {
	Limit int `json:"limit"`
}

// StateObjectsRequest is the body of POST /state-objects/done, and
// StateObjectsResponse the answer of a claim: object references.
type StateObjectsRequest struct {
	Refs []string `json:"refs"`
}

// StateObjectsResponse lists the references a sweeper claimed.
type StateObjectsResponse struct {
	Refs []string `json:"refs"`
}

// StateObjectReserve asks for a new object reference of key in scope,
// for a write through the worker-side state backend: the try must be
// allowed to write the scope (core.ErrForbidden otherwise, as for a set).
func (c *Client) StateObjectReserve(ctx context.Context, scope core.StateScope, key string) (*StateObjectResponse, error) {
	k, err := c.keyCall(http.MethodPost, scope, key)
	if err != nil {
		return nil, err
	}
	k.path += "/object"
	var out StateObjectResponse
	k.out = &out
	if err := c.do(ctx, k); err != nil {
		return nil, err
	}
	return &out, nil
}

// StateObjectsClaim leases up to limit object references due for deletion
// (worker credential).
func (c *Client) StateObjectsClaim(ctx context.Context, limit int) ([]string, error) {
	var out StateObjectsResponse
	if err := c.doJSON(ctx, http.MethodPost, "/state-objects/claim", StateObjectsClaimRequest{Limit: limit}, &out); err != nil {
		return nil, err
	}
	return out.Refs, nil
}

// StateObjectsDone reports references whose objects are deleted (worker
// credential).
func (c *Client) StateObjectsDone(ctx context.Context, refs []string) error {
	return c.doJSON(ctx, http.MethodPost, "/state-objects/done", StateObjectsRequest{Refs: refs}, nil)
}
