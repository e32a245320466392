package weir

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/operator"
)

// TestHandleStreamRegistersTheHandler: a sensor with HandleStream compiles
// into a streaming operator naming its handler, and the worker's registry
// calls the handler with each event's position and payload.
func TestHandleStreamRegistersTheHandler(t *testing.T) {
	t.Parallel()
	pages := seqTrigger(t)
	var got []StreamEvent
	d := NewDAG("pages")
	d.Sensor("load", pages, HandleStream(func(_ context.Context, _ *TaskContext, ev StreamEvent) error {
		got = append(got, ev)
		return nil
	}))
	specs, funcs, err := compileAll([]*DAG{d}, dagfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	load := specs[0].Task("load")
	name := HandlerFunctionName("pages", "load")
	if !load.HandlesStream() || load.Args[core.ArgHandleFunction] != name {
		t.Fatalf("load = %+v, want a streaming operator with handle_function %q", load, name)
	}
	fn, ok := funcs.Lookup(name)
	if !ok {
		t.Fatalf("%q is not registered (have %v)", name, funcs.Names())
	}
	tc := operator.TaskContext{TaskID: "load", Resume: &operator.Resume{Method: core.NextMethodStream,
		Kwargs: json.RawMessage(`{"sequence_index":7}`), Event: json.RawMessage(`{"n":8}`)}}
	if _, err := fn(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	var ev struct{ N int }
	if len(got) != 1 || got[0].SequenceIndex != 7 || got[0].Decode(&ev) != nil || ev.N != 8 {
		t.Errorf("the handler got %+v, want event 7 with n 8", got)
	}
}

// TestHandleStreamRefusals: HandleStream on a task that is not a sensor,
// with a nil function or as a default arg is a problem naming it.
func TestHandleStreamRefusals(t *testing.T) {
	t.Parallel()
	h := func(context.Context, *TaskContext, StreamEvent) error { return nil }
	for name, build := range map[string]func(d *DAG){
		"not a sensor": func(d *DAG) { d.Bash("b", "echo", HandleStream(h)) },
		"nil":          func(d *DAG) { d.Sensor("s", TimeDelta(1), HandleStream(nil)) },
	} {
		d := NewDAG("bad")
		build(d)
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "handle_function") {
			t.Errorf("%s: validate = %v, want a problem naming handle_function", name, err)
		}
	}
	d := NewDAG("bad", DefaultArgs(HandleStream(h)))
	d.Noop("n")
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "default arg") {
		t.Errorf("as a default arg: validate = %v, want a problem", err)
	}
}

// TestHandleStreamBatchRegistersABatchHandler: a sensor with
// HandleStreamBatch names its handler like HandleStream, the worker's
// registry knows it takes batches, and it receives a batch's events in
// order with their positions; a sensor given both handlers is a problem.
func TestHandleStreamBatchRegistersABatchHandler(t *testing.T) {
	t.Parallel()
	pages := seqTrigger(t)
	var got []StreamEvent
	d := NewDAG("pages")
	d.Sensor("load", pages, HandleStreamBatch(func(_ context.Context, _ *TaskContext, evs []StreamEvent) error {
		got = append(got, evs...)
		return nil
	}))
	specs, funcs, err := compileAll([]*DAG{d}, dagfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := HandlerFunctionName("pages", "load")
	if load := specs[0].Task("load"); !load.HandlesStream() || load.Args[core.ArgHandleFunction] != name {
		t.Fatalf("load = %+v, want a streaming operator with handle_function %q", load, name)
	}
	fn, ok := funcs.Lookup(name)
	if !ok || !funcs.TakesStreamBatches(name) {
		t.Fatalf("%q is not registered as a batch handler (have %v)", name, funcs.Names())
	}
	tc := operator.TaskContext{TaskID: "load", Resume: &operator.Resume{Method: core.NextMethodStream,
		Kwargs: json.RawMessage(`{"sequence_index":7,"count":2}`),
		Event:  json.RawMessage(`[{"sequence_index":7,"payload":{"n":8}},{"sequence_index":8,"payload":{"n":9}}]`)}}
	if _, err := fn(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	var ev struct{ N int }
	if len(got) != 2 || got[0].SequenceIndex != 7 || got[1].SequenceIndex != 8 || got[1].Decode(&ev) != nil || ev.N != 9 {
		t.Errorf("the handler got %+v, want events 7 and 8", got)
	}

	both := NewDAG("both")
	both.Sensor("s", pages, HandleStream(func(context.Context, *TaskContext, StreamEvent) error { return nil }),
		HandleStreamBatch(func(context.Context, *TaskContext, []StreamEvent) error { return nil }))
	if err := both.Validate(); err == nil || !strings.Contains(err.Error(), "one of HandleStream and HandleStreamBatch") {
		t.Errorf("both handlers: validate = %v, want a problem naming the two options", err)
	}
}

// seqTrigger is a command trigger whose command prints 1, 2 and 3.
func seqTrigger(t *testing.T) TriggerSpec {
	t.Helper()
	tr, err := NewTrigger("command", map[string]any{"command": "seq 3"})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
