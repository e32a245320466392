package weir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
)

// StreamEvent is one event of a stream as a streaming operator's handler
// receives it: its position in the stream and its payload.
type StreamEvent struct {
	// SequenceIndex is the event's position: 0, 1, 2, … in the order the
	// trigger emitted the events.
	SequenceIndex int64
	// Payload is the event as the trigger emitted it (JSON).
	Payload json.RawMessage
}

// Decode decodes the event's payload into v.
func (e StreamEvent) Decode(v any) error {
	if err := json.Unmarshal(e.Payload, v); err != nil {
		return fmt.Errorf("decode stream event %d: %w", e.SequenceIndex, err)
	}
	return nil
}

// StreamHandler handles one event of a streaming operator's stream. It is
// called once per event, in sequence order, each call after the previous
// returned; returning nil records the event handled (durably: a retry
// never handles it again), an error fails the try, and the retry resumes
// at that event.
type StreamHandler func(ctx context.Context, tc *TaskContext, ev StreamEvent) error

// HandleStream makes a sensor whose trigger streams a streaming operator
// (handle_function in a DAG file; docs/streaming.md#streaming-operators):
// its try resumes on a worker at the trigger's first event and calls fn
// for each event in order as it is committed, while the trigger still
// produces, until the stream closes. The handler is registered under
// HandlerFunctionName(dag_id, task_id).
//
//	dag.Sensor("load", pages, weir.HandleStream(func(ctx context.Context, tc *weir.TaskContext, ev weir.StreamEvent) error {
//		return insertPage(ctx, ev.Payload)
//	}), weir.Retries(3))
func HandleStream(fn StreamHandler) TaskOption {
	return func(t *Task) {
		if setHandler(t, "HandleStream", fn == nil) {
			t.handler = fn
		}
	}
}

// StreamBatchHandler handles the events of a streaming operator's stream
// committed since its previous call (at least one, at most 500), in
// sequence order. Returning nil records the whole batch handled (durably:
// a retry never handles its events again); an error fails the try with
// none of the batch recorded, and the retry calls it again from the
// batch's first event (its batches may then be cut differently).
type StreamBatchHandler func(ctx context.Context, tc *TaskContext, evs []StreamEvent) error

// HandleStreamBatch makes a sensor whose trigger streams a streaming
// operator like HandleStream, but fn receives the events in batches: each
// call gets every event committed since the previous call returned (one
// transaction of inserts for a page of events, say). The order and retry
// guarantees are HandleStream's, per batch.
//
//	dag.Sensor("load", pages, weir.HandleStreamBatch(func(ctx context.Context, tc *weir.TaskContext, evs []weir.StreamEvent) error {
//		return insertPages(ctx, evs) // in one transaction
//	}), weir.Retries(3))
func HandleStreamBatch(fn StreamBatchHandler) TaskOption {
	return func(t *Task) {
		if setHandler(t, "HandleStreamBatch", fn == nil) {
			t.batchHandler = fn
		}
	}
}

// setHandler checks that option (HandleStream or HandleStreamBatch) may
// set a stream handler on t, recording a problem otherwise, and names
// the handler in the task's args when it may.
func setHandler(t *Task, option string, nilFn bool) bool {
	switch {
	case t.inDefaults:
		t.problem(core.ArgHandleFunction, "%s cannot be a default arg; set it on each sensor", option)
	case nilFn:
		t.problem(core.ArgHandleFunction, "%s needs a function, got nil", option)
	case t.spec.Operator != operator.Sensor:
		t.problem(core.ArgHandleFunction, "%s applies to sensor tasks only, not %s tasks", option, t.spec.Operator)
	case t.handler != nil || t.batchHandler != nil:
		t.problem(core.ArgHandleFunction, "%s: the sensor has a stream handler already; set one of HandleStream and HandleStreamBatch, once", option)
	default:
		t.spec.Args[core.ArgHandleFunction] = HandlerFunctionName(t.dag.ID(), t.ID())
		return true
	}
	return false
}

// HandlerFunctionName is the name a streaming operator's Go handler is
// registered under in the worker: "<dag_id>.<task_id>#__stream__". YAML
// DAGs served by the same binary can name it as handle_function.
func HandlerFunctionName(dagID, taskID string) string {
	return operator.ResumeFunctionName(FunctionName(dagID, taskID), core.NextMethodStream)
}

// adaptHandler turns a StreamHandler into the function the worker's
// registry runs once per event (the event's payload is the resume event,
// its sequence index in the resume's kwargs).
func adaptHandler(fn StreamHandler) operator.GoFunc {
	return func(ctx context.Context, tc operator.TaskContext) (any, error) {
		if tc.Resume == nil || tc.Resume.Method != core.NextMethodStream {
			return nil, errors.New("a stream handler runs only for the events of its stream")
		}
		var kw operator.HandleKwargs
		if err := json.Unmarshal(tc.Resume.Kwargs, &kw); err != nil {
			return nil, fmt.Errorf("stream handler: decode the event's position: %w", err)
		}
		return nil, fn(ctx, newTaskContext(tc, nil), StreamEvent{SequenceIndex: kw.SequenceIndex, Payload: tc.Resume.Event})
	}
}

// adaptBatchHandler turns a StreamBatchHandler into the function the
// worker's registry runs once per batch (the events are the resume
// event, a JSON array).
func adaptBatchHandler(fn StreamBatchHandler) operator.GoFunc {
	return func(ctx context.Context, tc operator.TaskContext) (any, error) {
		if tc.Resume == nil || tc.Resume.Method != core.NextMethodStream {
			return nil, errors.New("a stream handler runs only for the events of its stream")
		}
		var raw []core.StreamEvent
		if err := json.Unmarshal(tc.Resume.Event, &raw); err != nil {
			return nil, fmt.Errorf("stream batch handler: decode the batch: %w", err)
		}
		evs := make([]StreamEvent, len(raw))
		for i, ev := range raw {
			evs[i] = StreamEvent{SequenceIndex: ev.SequenceIndex, Payload: ev.Payload}
		}
		return nil, fn(ctx, newTaskContext(tc, nil), evs)
	}
}

// registerHandler registers t's stream handler, if it has one, in funcs.
func registerHandler(funcs *operator.Registry, dagID string, t *Task) error {
	name := HandlerFunctionName(dagID, t.ID())
	switch {
	case t.handler != nil:
		return funcs.Register(name, adaptHandler(t.handler))
	case t.batchHandler != nil:
		return funcs.RegisterStreamBatch(name, adaptBatchHandler(t.batchHandler))
	}
	return nil
}
