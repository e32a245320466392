package storetest

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testTaskInstanceIterate: a producer's deferral opens its stream (a
// closed one refuses it, nothing changed); instances of an iterating task
// are created for envelopes in the transaction that consumes them, a
// repeat or an overlap changes nothing, and closing deletes the
// placeholder.
func testTaskInstanceIterate(t *testing.T, f *fixture) {
	ph := newTI("insert", core.TINone)
	run, sid, trig := f.producerRun(t, "r1", ph)
	st, err := f.st.StreamGet(f.ctx, sid)
	if err != nil || st.TriggerID != trig || st.MaxPending != 10 || st.Closed {
		t.Fatalf("the producer's stream = %+v, %v; want open, max_pending 10, produced by trigger %d", st, err, trig)
	}
	_, err = f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: sid, Payloads: payloads(0, 4), Now: f.now})
	must(t, err, "append 4")

	kids := func(from, through int) []store.NewTaskInstance {
		var out []store.NewTaskInstance
		for i := from; i <= through; i++ {
			k := newTI("insert", core.TINone)
			k.MapIndex = i
			out = append(out, k)
		}
		return out
	}
	iterate := func(from, through int, closing bool) error {
		return f.st.TaskInstanceIterate(f.ctx, &store.TaskInstanceIterateParams{DagRunID: run.ID, TaskID: "insert", StreamID: sid,
			Instances: kids(from, through), From: int64(from), Through: int64(through), Close: closing, Now: f.now})
	}
	must(t, iterate(0, 1, false), "iterate over 0..1")
	wantErr(t, iterate(1, 2, false), core.ErrConflict, "iterate over an envelope consumed before")
	mapped := func() int {
		tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskID: "insert"})
		must(t, err, "list insert")
		return len(tis)
	}
	if st, _ := f.st.StreamGet(f.ctx, sid); st.Pending != 2 || mapped() != 3 {
		t.Fatalf("after 0..1 (and a refused overlap): %d pending, %d instances of insert; want 2 pending, placeholder + 2", st.Pending, mapped())
	}
	must(t, iterate(2, 3, true), "iterate over 2..3 and close")
	_, err = f.st.TaskInstanceGet(f.ctx, ph.ID)
	wantErr(t, err, core.ErrNotFound, "the placeholder after closing")
	if mapped() != 4 {
		t.Fatalf("after closing: %d instances of insert, want 4", mapped())
	}
	wantErr(t, iterate(4, 3, true), core.ErrNotFound, "close without a placeholder")

	// A retry of the producer resumes its open stream; a closed one
	// cannot be produced again.
	_, err = f.st.StreamClose(f.ctx, &store.StreamCloseParams{StreamID: sid, Error: "boom", Now: f.now})
	must(t, err, "close the stream")
	other := newTI("fetch", core.TINone)
	run2 := f.run("etl", "r2", other)
	_, err = f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: other.ID, From: []core.TIState{core.TINone},
		Trigger: core.TriggerSpec{Type: "command"}, StreamID: sid, MaxPending: 10, Now: f.now})
	wantErr(t, err, core.ErrInvalid, "defer on a closed stream")
	if ti, err := f.st.TaskInstanceGet(f.ctx, other.ID); err != nil || ti.State != core.TINone || run2 == nil {
		t.Fatalf("the refused producer = %+v, %v; want unchanged (none)", ti, err)
	}
}

// testTriggerRetireProducer: a producer's trigger goes once no try waits
// on it (timed out, or marked while deferred), its stream still open (and
// left open, for the producer's next try); not while its try waits, and
// never a trigger without a stream.
func testTriggerRetireProducer(t *testing.T, f *fixture) {
	plain := newTI("wait", core.TINone)
	run, sid, trig := f.producerRun(t, "r1", plain)
	prod := f.ti(t, run, "fetch")
	if gone, err := f.st.TriggerRetireProducer(f.ctx, trig); err != nil || gone {
		t.Fatalf("retire while the producer waits = %t, %v; want it kept", gone, err)
	}
	other, err := f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: plain.ID, From: []core.TIState{core.TINone},
		Trigger: core.TriggerSpec{Type: "timedelta"}, Now: f.now})
	must(t, err, "defer a plain try")
	_, err = f.st.TaskInstanceResume(f.ctx, &store.TaskInstanceResumeParams{IDs: []string{prod.ID, plain.ID}, Fail: "timed out", Now: f.now})
	must(t, err, "time the tries out")
	if gone, err := f.st.TriggerRetireProducer(f.ctx, other); err != nil || gone {
		t.Fatalf("retire a trigger without a stream = %t, %v; want it kept (TriggerDeleteUnused's)", gone, err)
	}
	if gone, err := f.st.TriggerRetireProducer(f.ctx, trig); err != nil || !gone {
		t.Fatalf("retire once no try waits = %t, %v; want it gone", gone, err)
	}
	_, err = f.st.TriggerGet(f.ctx, trig)
	wantErr(t, err, core.ErrNotFound, "the retired trigger")
	if st, err := f.st.StreamGet(f.ctx, sid); err != nil || st.Closed || st.TriggerID != 0 {
		t.Fatalf("the stream after its trigger retired = %+v, %v; want it open, without a trigger", st, err)
	}
	if gone, err := f.st.TriggerRetireProducer(f.ctx, trig); err != nil || gone {
		t.Errorf("retire again = %t, %v; want nothing", gone, err)
	}

	// A producer marked failed while deferred keeps the trigger's id but
	// no longer waits on it.
	run2, _, trig2 := f.producerRun(t, "r2")
	marked := f.ti(t, run2, "fetch")
	_, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{marked.ID}, To: core.TIFailed, Now: f.now})
	must(t, err, "mark it failed")
	if gone, err := f.st.TriggerRetireProducer(f.ctx, trig2); err != nil || !gone {
		t.Errorf("retire the trigger of a producer marked failed = %t, %v; want it gone", gone, err)
	}
}

// producerRun creates run runID of dag etl with a producer "fetch" and
// others, defers fetch on a command trigger producing its stream
// (max_pending 10), and returns the run, the stream's id and the
// trigger's id.
func (f *fixture) producerRun(t *testing.T, runID string, others ...store.NewTaskInstance) (*core.DagRun, string, int64) {
	t.Helper()
	prod := newTI("fetch", core.TINone)
	run := f.run("etl", runID, append([]store.NewTaskInstance{prod}, others...)...)
	sid := core.TaskStreamID(run.ID, "fetch")
	trig, err := f.st.TaskInstanceDefer(f.ctx, &store.TaskInstanceDeferParams{ID: prod.ID, From: []core.TIState{core.TINone},
		Trigger: core.TriggerSpec{Type: "command"}, StreamID: sid, MaxPending: 10, Now: f.now})
	must(t, err, "defer the producer with its stream")
	return run, sid, trig
}

// ti is the current try of taskID (unmapped) in run.
func (f *fixture) ti(t *testing.T, run *core.DagRun, taskID string) *core.TaskInstance {
	t.Helper()
	ti, err := f.st.TaskInstanceGetByKey(f.ctx, run.DagID, run.RunID, taskID, core.NoMapIndex)
	must(t, err, "get "+taskID)
	return ti
}

// testRunEndClosesStreams: a run that ends (marked failed while its
// producer pushed) closes its task streams still open, the last envelope
// marked last, with the reason; another run's stream and a stream closed
// before keep theirs.
func testRunEndClosesStreams(t *testing.T, f *fixture) {
	run, sid, _ := f.producerRun(t, "ends")
	_, err := f.st.StreamAppend(f.ctx, &store.StreamAppendParams{StreamID: sid, Payloads: payloads(0, 3), Now: f.now})
	must(t, err, "append 3")
	other, otherSID, _ := f.producerRun(t, "goes_on")
	moved, err := f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunFailed, Now: f.at(time.Second)})
	if err != nil || !moved {
		t.Fatalf("mark the run failed: %v, %v", moved, err)
	}
	st, err := f.st.StreamGet(f.ctx, sid)
	if err != nil || !st.Closed || st.Error != "the dag run ended failed with the stream open" {
		t.Fatalf("the ended run's stream = %+v, %v; want closed with the reason", st, err)
	}
	evs, err := f.st.StreamEventList(f.ctx, &store.StreamEventListParams{StreamID: sid, After: -1, Limit: 10})
	if err != nil || len(evs) != 3 || !evs[2].IsLast {
		t.Errorf("the ended run's envelopes = %+v, %v; want 3, the last marked so", evs, err)
	}
	if st, err := f.st.StreamGet(f.ctx, otherSID); err != nil || st.Closed {
		t.Errorf("run %s's stream = %+v, %v; want open", other.RunID, st, err)
	}
}
