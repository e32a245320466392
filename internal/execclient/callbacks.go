package execclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
)

// CallbackWorkload is one claimed attempt of a fired callback
// (docs/emission.md#callbacks) with what a worker needs to run it.
type CallbackWorkload struct {
	Callback core.Callback `json:"callback"` // Attempts is this claim's attempt
	DagRun   core.DagRun   `json:"dag_run"`
	// Params are the DAG's params overridden by the run's conf.
	Params map[string]any `json:"params,omitempty"`
	Token  string         `json:"token"` // callback token of this attempt (scope callback)
}

// CallbackReport ends a callback's attempt: success or failed, with the
// error of a failure.
type CallbackReport struct {
	State core.CallbackState `json:"state"`
	Error string             `json:"error,omitempty"`
}

func callbackPath(id int64, what string) string {
	return "/callbacks/" + strconv.FormatInt(id, 10) + "/" + what
}

// CallbackHeartbeat tells the server the worker running callback id (this
// client's callback token) is alive; core.ErrConflict when its attempt is
// no longer running.
func (c *Client) CallbackHeartbeat(ctx context.Context, id int64) error {
	return c.doJSON(ctx, http.MethodPut, callbackPath(id, "heartbeat"), struct{}{}, nil)
}

// CallbackFinish reports the end of callback id's attempt.
func (c *Client) CallbackFinish(ctx context.Context, id int64, r CallbackReport) error {
	return c.doJSON(ctx, http.MethodPatch, callbackPath(id, "state"), r, nil)
}

// CallbackAppendLog ships chunk, the bytes of the attempt's log from
// offset on, as AppendLog does for a try.
func (c *Client) CallbackAppendLog(ctx context.Context, id int64, offset int64, chunk []byte) (int64, error) {
	var out LogAppendResponse
	k := call{method: http.MethodPost, path: callbackPath(id, "logs"), query: url.Values{"offset": {strconv.FormatInt(offset, 10)}},
		body: chunk, contentType: "text/plain; charset=utf-8", out: &out}
	if err := c.do(ctx, k); err != nil {
		return 0, err
	}
	return out.NextOffset, nil
}

// CallbackEmitRequest is an asset_event notifier's event: its rendered
// partition key and extra (the asset and idempotency key are the
// callback's).
type CallbackEmitRequest struct {
	PartitionKey *string         `json:"partition_key,omitempty"`
	Extra        json.RawMessage `json:"extra,omitempty"`
}

// CallbackEmit emits the event of callback id's asset_event notifier and
// returns its receipt (Duplicate when an earlier attempt emitted it).
func (c *Client) CallbackEmit(ctx context.Context, id int64, r CallbackEmitRequest) (*core.AssetEventReceipt, error) {
	var out core.AssetEventReceipt
	if err := c.doJSON(ctx, http.MethodPost, callbackPath(id, "asset-events"), r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CallbackConnections is a webhook notifier's connection lookup (an
// operator.ConnectionLookup): the one connection callback ID names.
type CallbackConnections struct {
	Client *Client
	ID     int64
}

// ConnectionURI returns the URI of connection connID.
func (l CallbackConnections) ConnectionURI(ctx context.Context, connID string) (string, error) {
	var out Connection
	if err := l.Client.doJSON(ctx, http.MethodGet, callbackPath(l.ID, "connections/"+url.PathEscape(connID)), nil, &out); err != nil {
		return "", err
	}
	return out.URI, nil
}
