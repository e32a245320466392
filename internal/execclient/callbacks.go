package execclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

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

// CallbackEmitRequest is a callback's event: an asset_event notifier's
// rendered partition key and extra (the asset and idempotency key are the
// callback's), or a Go callback's emission, which names the asset (one of
// its outlets) and the idempotency key too.
type CallbackEmitRequest struct {
	Asset         *core.AssetRef  `json:"asset,omitempty"`
	PartitionKey  *string         `json:"partition_key,omitempty"`
	PartitionDate string          `json:"partition_date,omitempty"`
	Extra         json.RawMessage `json:"extra,omitempty"`
	// IdempotencyKey is a Go callback's (CallbackEmitter fills one in).
	IdempotencyKey *string `json:"idempotency_key,omitempty"`
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

// CallbackEmitter is a Go callback's emission (an operator.Emitter): the
// events of callback ID's outlets. An emission without an idempotency key
// gets "callback/<id>/emit-<n>" for the n-th emission of the attempt, so a
// callback run again after its worker died, which emits the same events in
// the same order, gets the first receipts and creates nothing new.
type CallbackEmitter struct {
	Client *Client
	ID     int64
	n      atomic.Int64
}

// Emit emits req's event; an alias is refused (a callback emits its
// outlets, concrete assets).
func (e *CallbackEmitter) Emit(ctx context.Context, req EmitRequest) (*core.AssetEventReceipt, error) {
	if req.Alias != "" {
		return nil, fmt.Errorf("emit an event of asset %s: a callback emits its outlets, not through alias %q: %w", req.Asset, req.Alias, core.ErrInvalid)
	}
	n := e.n.Add(1)
	if req.IdempotencyKey == nil {
		key := "callback/" + strconv.FormatInt(e.ID, 10) + "/emit-" + strconv.FormatInt(n, 10)
		req.IdempotencyKey = &key
	}
	rec, err := e.Client.CallbackEmit(ctx, e.ID, CallbackEmitRequest{Asset: &req.Asset, PartitionKey: req.PartitionKey,
		PartitionDate: req.PartitionDate, Extra: req.Extra, IdempotencyKey: req.IdempotencyKey})
	if err != nil {
		return nil, fmt.Errorf("emit an event of asset %s: %w", req.Asset, err)
	}
	return rec, nil
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
