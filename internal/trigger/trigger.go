// Package trigger defines triggers: values (a type name and JSON kwargs)
// that the triggerer runs to wait for something outside a worker (a time,
// a file, an HTTP status, a query result, an object, another DAG's task,
// a line from a process). A trigger's run produces events; a deferred task
// resumes with the first one, and watchers and streams (SPEC D and F)
// consume every one. Triggers are never closures: a Spec is stored in the
// trigger table and rebuilt by type name in whichever triggerer claims it,
// so every type is registered in a Registry and validates its kwargs when
// a DAG is loaded or a task defers (New has no side effects).
package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Spec is a trigger as a value: the registered type name and its kwargs.
type Spec = core.TriggerSpec

// Trigger is one constructed trigger, ready to run.
type Trigger interface {
	// Run waits for what the trigger watches and reports each occurrence
	// with rt.Emit, which returns once the event is committed. Run returns
	// when it has nothing more to report (nil), when ctx ends (the
	// triggerer cancels a trigger whose waiters are gone, or that moved to
	// another triggerer), or with an error that fails its waiters. A
	// deferral's trigger is cancelled after its first accepted event.
	Run(ctx context.Context, rt *Runtime) error
}

// Type is one registered kind of trigger.
type Type struct {
	Name string // the `type` a Spec names, e.g. "timedelta"
	// Summary is one line for `weir triggers types` and the docs.
	Summary string
	// New decodes and validates kwargs and returns the trigger, without
	// side effects (it also runs at DAG load and at the defer call). Errors
	// name the offending kwarg and wrap core.ErrInvalid.
	New func(kwargs json.RawMessage) (Trigger, error)
	// Uses says where the type may run: UseDeferral (a deferred task or a
	// sensor waits on it; the first event resumes it), UseWatcher (an asset
	// watcher: it runs until cancelled and commits cursors with its
	// events), UseStream (its run produces a stream of events, each
	// persisted as an envelope: docs/streaming.md), or several. Zero means
	// UseDeferral.
	Uses Use
	// CheckCursor, for a watcher type, decodes a cursor as its polls do,
	// so that an admin's edit every poll would refuse is refused at once
	// (Registry.CheckCursor); nil = any JSON value (a command's own).
	CheckCursor func(raw json.RawMessage) error
}

// Use is a bit set of the places a trigger type may run.
type Use int

// The uses of a trigger type.
const (
	UseDeferral Use = 1 << iota
	UseWatcher
	UseStream
)

// Can reports whether t may run for u.
func (t Type) Can(u Use) bool {
	uses := t.Uses
	if uses == 0 {
		uses = UseDeferral
	}
	return uses&u != 0
}

// Runtime is what a running trigger may use. It is built by the triggerer
// for each run.
type Runtime struct {
	// ID is the trigger's row id; CreatedAt is when the trigger row was
	// created (a timedelta counts from it, so a trigger that moves to
	// another triggerer keeps its deadline).
	ID        int64
	CreatedAt time.Time
	Clock     core.Clock
	// Log is the trigger's log (for a deferral, it is appended to the
	// waiting try's log). Safe for concurrent use.
	Log io.Writer
	// Connections resolves a conn_id to its URI.
	Connections ConnectionLookup
	// Runs reads DAG runs and task instances (the external_task trigger).
	Runs RunReader
	// EmitFunc persists one event; Emit calls it.
	EmitFunc func(ctx context.Context, e Event) error
	// EmitBatchFunc persists events in order, all before it returns; nil
	// = one EmitFunc call each. EmitBatch calls it.
	EmitBatchFunc func(ctx context.Context, es []Event) error
	// Stream is set when the run produces a stream (docs/streaming.md):
	// every Emit appends the stream's next envelope, waiting while the
	// stream's max_pending envelopes are not consumed yet, and Run
	// returning nil closes the stream (its last envelope is is_last).
	Stream *StreamPosition
	// Watcher is set when the trigger runs asset watchers (docs/watchers.md):
	// it gives the watched assets and their cursors, and commits batches.
	// For a watcher, Emit records the payload as an event of every watched
	// asset, the cursors unchanged.
	Watcher Watcher
}

// Event is one occurrence a trigger reports; its payload is any JSON value
// (the deferred task receives it as its event).
type Event struct {
	Payload json.RawMessage `json:"payload"`
}

// Emit encodes payload as JSON and hands it to the triggerer; it returns
// once the event is committed, or an error (the trigger should return it:
// the event was not accepted, typically because ctx ended).
func (rt *Runtime) Emit(ctx context.Context, payload any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode trigger event: %w", err)
	}
	if rt.EmitFunc == nil {
		return errors.New("emit trigger event: the runtime has no event sink")
	}
	return rt.EmitFunc(ctx, Event{Payload: raw})
}

// StreamPosition is where a stream stands when a trigger run starts.
type StreamPosition struct {
	// ID is the stream's id (the trigger run's, in an envelope).
	ID string
	// LastIndex is the sequence index of the last event persisted before
	// this run started, -1 for none. A trigger that restarts (its
	// triggerer died, or it moved to another) resumes after it: the first
	// event it emits now gets sequence index LastIndex+1, so it emits from
	// the item after the one LastIndex carries, or the stream holds that
	// item twice. A built-in streaming trigger does; a custom one must.
	LastIndex int64
}

// EmitBatch encodes payloads as JSON and hands them to the triggerer as
// consecutive events; it returns once every one is committed (for a
// stream, in as many appends as max_pending allows), or with an error.
// One batch of many events commits far faster than as many Emit calls.
func (rt *Runtime) EmitBatch(ctx context.Context, payloads ...any) error {
	es := make([]Event, len(payloads))
	for i, p := range payloads {
		raw, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode trigger event %d of %d: %w", i+1, len(payloads), err)
		}
		es[i].Payload = raw
	}
	if rt.EmitBatchFunc != nil {
		return rt.EmitBatchFunc(ctx, es)
	}
	if rt.EmitFunc == nil {
		return errors.New("emit trigger events: the runtime has no event sink")
	}
	for _, e := range es {
		if err := rt.EmitFunc(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// Logf writes one timestamped line to the trigger log.
func (rt *Runtime) Logf(format string, args ...any) {
	if rt.Log == nil {
		return
	}
	now := time.Now()
	if rt.Clock != nil {
		now = rt.Clock.Now()
	}
	_, _ = fmt.Fprintf(rt.Log, "[%s] "+format+"\n", append([]any{now.UTC().Format(time.RFC3339)}, args...)...)
}

// Now is the runtime clock's time.
func (rt *Runtime) Now() time.Time {
	if rt.Clock == nil {
		return time.Now()
	}
	return rt.Clock.Now()
}

// ConnectionLookup resolves a conn_id to its URI (as operator.ConnectionLookup).
type ConnectionLookup interface {
	ConnectionURI(ctx context.Context, connID string) (string, error)
}

// RunReader reads DAG runs and task instances.
type RunReader interface {
	DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error)
	TaskInstanceGetByKey(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error)
}
