package weir

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
)

// CallbackFunc is a callback written in Go (docs/go-sdk.md#callbacks): the
// worker calls it in its own process when the state change it is
// registered for is committed, as a durable callback (at least once, with
// its own log). An error or a panic fails the callback, never the try or
// the run it reports on.
type CallbackFunc func(ctx context.Context, cc *CallbackContext) error

// CallbackContext is what a Go callback sees: which callback it is, what
// fired it, whose it is, the run's params, a logger writing to the
// callback's log, and Emit for the assets it declared as outlets.
type CallbackContext struct {
	CallbackID int64  // the same on every attempt: a key to make a repeat harmless
	Event      string // on_execute, on_success, on_failure, on_retry, on_skipped
	Level      string // "task" or "dag" (a run's end)
	Outcome    string // the state that fired it: running, success, failed, up_for_retry, skipped
	Attempt    int    // 1 on the first attempt
	DagID      string
	RunID      string
	TaskID     string         // "" for a DAG-level callback
	MapIndex   int            // -1 unless the task is mapped (and for a DAG-level callback)
	TryNumber  int            // the try that fired it; 0 for a DAG-level callback
	Params     map[string]any // the DAG's params, overridden by the run's conf
	Logger     *slog.Logger   // writes to the callback's log
	Log        io.Writer      // the callback's log itself

	op operator.CallbackContext
}

// PartitionKey returns the partition of the run the callback is for (""
// for none).
func (cc *CallbackContext) PartitionKey() string {
	if cc.op.Run.PartitionKey == nil {
		return ""
	}
	return *cc.op.Run.PartitionKey
}

// Emit records an event of asset now, as TaskContext.Emit does for a task
// (docs/emission.md): asset must be one of the outlets the callback was
// registered with (OnFailure(fn, asset)). The event's source is the
// callback: a task callback's event carries the try, a DAG-level
// callback's only the DAG and run. Without IdempotencyKey the n-th
// emission of the callback gets "callback/<id>/emit-<n>", so an attempt
// run again after its worker died gets the first receipts. The
// feedback-loop guard applies ([callbacks] max_chain_depth). Errors match
// ErrNoTry outside a worker, core errors otherwise (forbidden for an asset
// that is not an outlet of the callback).
func (cc *CallbackContext) Emit(ctx context.Context, asset AssetRef, opts ...EmitOption) (*Receipt, error) {
	req, err := emitRequestOf(asset, opts)
	if err != nil {
		return nil, err
	}
	if cc == nil || cc.op.Emitter == nil {
		return nil, ErrNoTry
	}
	return cc.op.Emitter.Emit(ctx, req)
}

// adaptCallback turns a CallbackFunc into the function the worker's
// registry runs.
func adaptCallback(fn CallbackFunc) operator.CallbackFunc {
	return func(ctx context.Context, oc operator.CallbackContext) error {
		cb := &oc.Callback
		return fn(ctx, &CallbackContext{CallbackID: cb.ID, Event: string(cb.Event), Level: string(cb.Level), Outcome: cb.Outcome,
			Attempt: cb.Attempts, DagID: cb.DagID, RunID: cb.RunID, TaskID: cb.TaskID, MapIndex: cb.MapIndex,
			TryNumber: cb.TryNumber, Params: oc.Params, Logger: oc.Logger, Log: oc.Log, op: oc})
	}
}

// OnExecute calls fn when a try of the task starts (not when a deferred
// try resumes). outlets are the assets fn may emit events of.
func OnExecute(fn CallbackFunc, outlets ...AssetRef) TaskOption {
	return taskCallback(core.OnExecute, fn, outlets)
}

// OnSuccess calls fn when a try of the task succeeds.
func OnSuccess(fn CallbackFunc, outlets ...AssetRef) TaskOption {
	return taskCallback(core.OnSuccess, fn, outlets)
}

// OnFailure calls fn when a try of the task fails with no tries left.
func OnFailure(fn CallbackFunc, outlets ...AssetRef) TaskOption {
	return taskCallback(core.OnFailure, fn, outlets)
}

// OnRetry calls fn when a try of the task fails and will be retried.
func OnRetry(fn CallbackFunc, outlets ...AssetRef) TaskOption {
	return taskCallback(core.OnRetry, fn, outlets)
}

// OnSkipped calls fn when a try of the task ends skipped (it returned
// ErrSkip).
func OnSkipped(fn CallbackFunc, outlets ...AssetRef) TaskOption {
	return taskCallback(core.OnSkipped, fn, outlets)
}

// OnRunSuccess calls fn when a run of the DAG succeeds (the DAG-level
// on_success). outlets are the assets fn may emit events of; its events
// carry the DAG and run and no task.
func OnRunSuccess(fn CallbackFunc, outlets ...AssetRef) DAGOption {
	return dagCallback(core.OnSuccess, fn, outlets)
}

// OnRunFailure calls fn when a run of the DAG fails (the DAG-level
// on_failure): the way to start an operational DAG on a failure, by
// emitting an event of an asset it is scheduled on.
func OnRunFailure(fn CallbackFunc, outlets ...AssetRef) DAGOption {
	return dagCallback(core.OnFailure, fn, outlets)
}

func taskCallback(ev core.CallbackEvent, fn CallbackFunc, outlets []AssetRef) TaskOption {
	return func(t *Task) {
		if t.spec.Callbacks == nil {
			t.spec.Callbacks = &core.Callbacks{}
		}
		name := FunctionName(t.dag.ID(), t.ID())
		spec, ok := t.dag.callbackSpec(name, ev, t.spec.Callbacks, fn, outlets, t.problem)
		if !ok {
			return
		}
		if t.callbacks == nil {
			t.callbacks = map[string]CallbackFunc{}
		}
		t.callbacks[spec.Function] = fn
		t.spec.Callbacks.Set(ev, append(t.spec.Callbacks.For(ev), spec))
	}
}

func dagCallback(ev core.CallbackEvent, fn CallbackFunc, outlets []AssetRef) DAGOption {
	return func(d *DAG) {
		if d.spec.Callbacks == nil {
			d.spec.Callbacks = &core.Callbacks{}
		}
		spec, ok := d.callbackSpec(d.ID(), ev, d.spec.Callbacks, fn, outlets, d.problem)
		if !ok {
			return
		}
		if d.callbacks == nil {
			d.callbacks = map[string]CallbackFunc{}
		}
		d.callbacks[spec.Function] = fn
		d.spec.Callbacks.Set(ev, append(d.spec.Callbacks.For(ev), spec))
	}
}

// callbackSpec returns the spec of Go callback fn for event ev of owner
// (a DAG's or a task's function name), registered under
// "<owner>#<event>/<index>", with its outlets added to the DAG's assets;
// problem reports a nil function or an alias outlet.
func (d *DAG) callbackSpec(owner string, ev core.CallbackEvent, cbs *core.Callbacks, fn CallbackFunc, outlets []AssetRef,
	problem func(path, format string, args ...any)) (core.CallbackSpec, bool) {
	path := fmt.Sprintf("%s[%d]", ev, len(cbs.For(ev)))
	if fn == nil {
		problem(path, "a Go callback needs a function, got nil")
		return core.CallbackSpec{}, false
	}
	spec := core.CallbackSpec{Function: owner + "#" + string(ev) + "/" + strconv.Itoa(len(cbs.For(ev)))}
	for _, ref := range d.useAssets(outlets) {
		if ref.Alias != "" {
			problem(path+".outlets", "a callback emits concrete assets; alias %q cannot be an outlet of a callback", ref.Alias)
			return core.CallbackSpec{}, false
		}
		spec.Outlets = append(spec.Outlets, ref.Name)
	}
	return spec, true
}
