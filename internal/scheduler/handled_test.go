package scheduler_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// handlerDAG: "fetch" is a streaming operator (a sensor with a handler)
// with one retry.
func handlerDAG() core.DAG {
	return core.DAG{DagID: "handled", Tasks: []core.Task{
		{TaskID: "fetch", Operator: "sensor", Retries: 1, Args: map[string]any{"mode": "deferrable", core.ArgHandleCommand: "cat"},
			StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "command", Kwargs: json.RawMessage(`{"command":"true"}`)}}},
		{TaskID: "report", Operator: "noop", DependsOn: []string{"fetch"}},
	}}
}

// TestStreamingOperatorResumesAtTheFirstEventAndRetriesWhereItStopped:
// the handler's first try waits deferred until the stream's first event
// (not its close), reads the events from the first not handled, records
// progress (a position past the stream's end is refused, nothing
// changed); its retry goes to a worker at once, without a new trigger,
// and reads from the recorded position.
func TestStreamingOperatorResumesAtTheFirstEventAndRetriesWhereItStopped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, handlerDAG())
	run := h.trigger("handled")
	h.step()
	if ti := h.ti(run, "fetch"); ti.State != core.TIDeferred || ti.NextMethod != core.NextMethodStream {
		t.Fatalf("fetch = %s (%q), want deferred on its trigger until the first event", ti.State, ti.NextMethod)
	}
	h.produce(run, []any{"a", "b", "c"}, false, "")
	if ti := h.ti(run, "fetch"); ti.State != core.TIScheduled {
		t.Fatalf("fetch after the first events = %s, want scheduled while its stream is open", ti.State)
	}
	h.step()
	tries := h.claim("w1", 1)
	if len(tries) != 1 {
		t.Fatalf("claimed %d, want fetch", len(tries))
	}
	svc, ctx := h.svc(h.clk), h.ctx
	b, err := svc.HandlerEvents(ctx, &tries[0], -1, 10)
	if err != nil || b.Handled != 0 || len(b.Events) != 3 || b.Closed {
		t.Fatalf("events = %+v, %v; want 3 from 0, open", b, err)
	}
	if _, err := svc.StreamHandled(ctx, &tries[0], 3); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "holds 3 events") {
		t.Fatalf("record past the end = %v, want invalid naming the stream's length", err)
	}
	if next, err := svc.StreamHandled(ctx, &tries[0], 0); err != nil || next != 1 {
		t.Fatalf("record event 0 handled = %d, %v; want 1", next, err)
	}
	h.finish(tries[0], func(core.TaskInstance) (core.TIState, any) { return core.TIFailed, nil })
	h.clk.Advance(time.Hour)
	h.step() // the retry is due: none
	h.step() // the stream exists: to a worker, no new trigger
	ti := h.ti(run, "fetch")
	if (ti.State != core.TIScheduled && ti.State != core.TIQueued) || ti.TryNumber != 2 || ti.TriggerID != nil {
		t.Fatalf("retry = %s try %d trigger %v, want try 2 scheduled (or queued) without a trigger", ti.State, ti.TryNumber, ti.TriggerID)
	}
	tries = h.claim("w1", 1)
	b, err = svc.HandlerEvents(ctx, &tries[0], -1, 10)
	if err != nil || b.Handled != 1 || len(b.Events) != 2 || b.Events[0].SequenceIndex != 1 {
		t.Fatalf("retry's events = %+v, %v; want 1 and 2", b, err)
	}
	h.finish(tries[0], func(core.TaskInstance) (core.TIState, any) { return core.TISuccess, nil })
	h.step()
	// A task without a handler has no stream to handle.
	report := h.claim("w1", 1)
	if len(report) != 1 || report[0].TaskID != "report" {
		t.Fatalf("claimed %v, want report", report)
	}
	if _, err := svc.HandlerEvents(ctx, &report[0], -1, 10); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "has no stream handler") {
		t.Errorf("events of a task without a handler = %v, want invalid", err)
	}
}
