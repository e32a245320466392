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
		switch {
		case t.inDefaults:
			t.problem(core.ArgHandleFunction, "HandleStream cannot be a default arg; set it on each sensor")
		case fn == nil:
			t.problem(core.ArgHandleFunction, "HandleStream needs a function, got nil")
		case t.spec.Operator != operator.Sensor:
			t.problem(core.ArgHandleFunction, "HandleStream applies to sensor tasks only, not %s tasks", t.spec.Operator)
		default:
			t.handler = fn
			t.spec.Args[core.ArgHandleFunction] = HandlerFunctionName(t.dag.ID(), t.ID())
		}
	}
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
