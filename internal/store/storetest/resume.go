package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testResumeByMethodAndFromNone: a resume restricted to a next method
// moves only the tries deferred with it (a handling sensor resumes at its
// stream's first event, a producer waiting for the close does not), and a
// try in state none moves to scheduled with an event (the retry of a
// handling sensor whose stream exists).
func testResumeByMethodAndFromNone(t *testing.T, f *fixture) {
	handler, producer, retry := newTI("handler", core.TINone), newTI("producer", core.TINone), newTI("retry", core.TINone)
	f.run("etl", "r1", handler, producer, retry)
	spec := core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1m"}`)}
	tid, err := f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: handler.ID, From: []core.TIState{core.TINone},
		Trigger: spec, NextMethod: core.NextMethodStream, Now: f.at(time.Second)})
	must(t, err, "defer the handler")
	_, err = f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: producer.ID, From: []core.TIState{core.TINone},
		Trigger: spec, Now: f.at(time.Second)})
	must(t, err, "defer the producer")
	// Both wait on their own trigger; resuming by method on the
	// handler's trigger moves the handler only, and the same on the
	// producer's trigger moves nothing.
	ptid := *f.get(producer.ID).TriggerID
	ev := json.RawMessage(`{"stream_id":"s"}`)
	moved, err := f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{TriggerID: ptid, Method: core.NextMethodStream, Event: ev, Now: f.at(2 * time.Second)})
	if err != nil || len(moved) != 0 || f.get(producer.ID).State != core.TIDeferred {
		t.Fatalf("resume by method on the producer's trigger = %v, %v; want nothing moved", moved, err)
	}
	moved, err = f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{TriggerID: tid, Method: core.NextMethodStream, Event: ev, Now: f.at(2 * time.Second)})
	if ti := f.get(handler.ID); err != nil || len(moved) != 1 || ti.State != core.TIScheduled || ti.NextMethod != core.NextMethodStream || string(ti.NextEvent) != string(ev) {
		t.Fatalf("resume by method = %v, %v (%s %q %s); want the handler scheduled with its method and the event", moved, err, ti.State, ti.NextMethod, ti.NextEvent)
	}
	// From none with an event.
	moved, err = f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{IDs: []string{retry.ID}, FromNone: true, Event: ev, Now: f.at(3 * time.Second)})
	if ti := f.get(retry.ID); err != nil || len(moved) != 1 || ti.State != core.TIScheduled || string(ti.NextEvent) != string(ev) || ti.NextMethod != "" {
		t.Fatalf("resume from none with an event = %v, %v (%s %q %s); want scheduled with the event", moved, err, ti.State, ti.NextMethod, ti.NextEvent)
	}
}
