package operator

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// Emitter lets a running try emit asset events now (an execclient.Client
// satisfies it; docs/emission.md).
type Emitter interface {
	Emit(ctx context.Context, req execclient.EmitRequest) (*core.AssetEventReceipt, error)
}

// ErrNoTry is what emitting answers where no try runs — a TaskContext the
// worker did not make, such as while DAGs are defined or loaded.
var ErrNoTry = errors.New("no running task: asset events are emitted only by a running task, never while DAGs are defined or loaded")

// Emitter returns the try's access to asset-event emission (the worker's
// XCom client is the try's Execution API client); without a running try
// every call fails with ErrNoTry.
func (tc TaskContext) Emitter() Emitter {
	return tryClient[Emitter](tc, noEmitter{})
}

// tryClient returns the try's Execution API client (the worker's XCom
// client) as an I, or none when the try has no such client.
func tryClient[I any](tc TaskContext, none I) I {
	if c, ok := tc.xcom.(I); ok {
		return c
	}
	return none
}

// noEmitter answers every call with ErrNoTry.
type noEmitter struct{}

func (noEmitter) Emit(context.Context, execclient.EmitRequest) (*core.AssetEventReceipt, error) {
	return nil, ErrNoTry
}

// Pusher lets a running producer task (stream: true) push items to its
// run's stream (an execclient.Client satisfies it; docs/streaming.md).
type Pusher interface {
	StreamHead(ctx context.Context) (*execclient.StreamHead, error)
	PushStream(ctx context.Context, from int64, items []json.RawMessage, closing bool) (*execclient.StreamHead, error)
}

// Pusher returns the try's access to its stream; without a running try
// every call fails with ErrNoTry.
func (tc TaskContext) Pusher() Pusher { return tryClient[Pusher](tc, noPusher{}) }

// noPusher answers every call with ErrNoTry.
type noPusher struct{}

func (noPusher) StreamHead(context.Context) (*execclient.StreamHead, error) { return nil, ErrNoTry }

func (noPusher) PushStream(context.Context, int64, []json.RawMessage, bool) (*execclient.StreamHead, error) {
	return nil, ErrNoTry
}
