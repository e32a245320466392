package weir

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
)

// The worker's Execution API client serves a Go task's emissions.
var _ operator.Emitter = (*execclient.Client)(nil)

// Receipt acknowledges an emitted asset event: EventID, the asset, the
// partition, the server's Timestamp, and Duplicate when an earlier
// emission with the same idempotency key created the event.
type Receipt = core.AssetEventReceipt

// ErrNoTry is returned by Emit where no try runs, such as on a
// TaskContext made while DAGs are defined.
var ErrNoTry = operator.ErrNoTry

// EmitOption sets a field of an emitted event; pass options to Emit.
type EmitOption func(*emitRequest)

type emitRequest struct {
	req   execclient.EmitRequest
	extra map[string]any
	err   error
}

// PartitionKey sets the event's partition key, such as "batch-0042".
func PartitionKey(key string) EmitOption {
	return func(r *emitRequest) { r.req.PartitionKey = &key }
}

// PartitionDate sets the partition's date (it needs PartitionKey).
func PartitionDate(t time.Time) EmitOption {
	return func(r *emitRequest) { r.req.PartitionDate = t.Format(time.RFC3339Nano) }
}

// EventExtra sets the event's extra, a JSON-encodable object of at most
// 16 KiB (values of keys that name secrets are stored as "***").
func EventExtra(extra map[string]any) EmitOption {
	return func(r *emitRequest) { r.extra = extra }
}

// IdempotencyKey names the one event this emission creates: emitting again
// with it — from a later try too — returns the first event's receipt and
// creates nothing. Without it Emit makes up a key per call, so that its
// own retries of the request are safe.
func IdempotencyKey(key string) EmitOption {
	return func(r *emitRequest) { r.req.IdempotencyKey = &key }
}

// ThroughAlias emits through alias, an alias the task declares in Outlets:
// the asset may then be any active asset, and the alias resolves to it
// from this event on.
func ThroughAlias(alias AssetRef) EmitOption {
	return func(r *emitRequest) {
		if alias.def != nil {
			r.err = fmt.Errorf("ThroughAlias needs an alias (weir.Alias(NAME)), not asset %q", alias.def.Name)
			return
		}
		r.req.Alias = alias.alias
	}
}

// Emit records an event of asset now, while the task runs, and returns its
// receipt (docs/emission.md): the asset must be one of the task's Outlets
// (or reached through ThroughAlias). The event is committed when Emit
// returns, its consumers are queued at once, and it stays whatever the
// task does later; the task's state does not change and its outlets still
// get their normal event when it succeeds.
//
//	batches := weir.Asset("batches")
//	d.Go("ingest", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
//		for n := 1; n <= 5; n++ {
//			// ... commit batch n ...
//			if _, err := tc.Emit(ctx, batches, weir.PartitionKey(fmt.Sprintf("batch-%d", n)),
//				weir.IdempotencyKey(fmt.Sprintf("ingest/%s/batch-%d", tc.RunID, n))); err != nil {
//				return nil, err
//			}
//		}
//		return nil, nil
//	}, weir.Outlets(batches))
//
// Errors match ErrNoTry outside a running try, core errors otherwise:
// forbidden for an asset the task does not declare, invalid for a bad
// field (a date without a key), too large for an oversized extra, conflict
// for a key that names another asset's event.
func (tc *TaskContext) Emit(ctx context.Context, asset AssetRef, opts ...EmitOption) (*Receipt, error) {
	req, err := emitRequestOf(asset, opts)
	if err != nil {
		return nil, err
	}
	em := operator.TaskContext{}.Emitter()
	if tc != nil {
		em = tc.op.Emitter()
	}
	return em.Emit(ctx, req)
}

// emitRequestOf builds the request of an emission of asset with opts
// (TaskContext.Emit, CallbackContext.Emit).
func emitRequestOf(asset AssetRef, opts []EmitOption) (execclient.EmitRequest, error) {
	if asset.def == nil {
		return execclient.EmitRequest{}, fmt.Errorf("Emit: the asset must be concrete (weir.Asset(NAME)), not alias %q; emit through an alias with weir.ThroughAlias", asset.alias)
	}
	r := emitRequest{req: execclient.EmitRequest{Asset: core.AssetRef{Name: asset.def.Name}}}
	for _, o := range opts {
		o(&r)
	}
	if r.err != nil {
		return execclient.EmitRequest{}, fmt.Errorf("Emit: %w", r.err)
	}
	if r.extra != nil {
		b, err := json.Marshal(r.extra)
		if err != nil {
			return execclient.EmitRequest{}, fmt.Errorf("Emit: encode extra: %w", err)
		}
		r.req.Extra = b
	}
	return r.req, nil
}
