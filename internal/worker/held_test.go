package worker

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// While a claim is in flight, a handed-on try's ended run is refused when
// an answer repeats it, but the same try queued again — resumed after a
// deferral, under its id — is a new run and is taken (it was dropped, and
// failed over for missed heartbeats, before).
func TestHeldTellsARepeatFromAResumption(t *testing.T) {
	t.Parallel()
	queued, resumed := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 10, 0, 5, 0, time.UTC)
	run := &core.TaskInstance{ID: "x", QueuedAt: &queued}
	again := &core.TaskInstance{ID: "x", QueuedAt: &resumed}
	var h held
	h.claimSent() // a worker's long poll is in flight almost always
	if !h.add(run) || h.add(run) {
		t.Fatal("a try is not held once")
	}
	h.remove(run, true) // handed on, it deferred
	if h.add(run) {
		t.Error("a claim answer repeating the ended run was taken")
	}
	if !h.add(again) {
		t.Error("the try resumed after its deferral (queued again) was refused")
	}
	h.remove(again, true)
	h.claimDone()
	if !h.add(run) {
		t.Error("with no claim in flight, nothing is refused")
	}

	// The resumption may come while the run that deferred winds down:
	// it is taken, and that run's end does not forget it.
	var w held
	w.add(run)
	if !w.add(again) {
		t.Error("the resumption was refused while its deferred run wound down")
	}
	w.remove(run, false)
	if w.add(again) || w.count() != 1 {
		t.Errorf("the deferred run's end forgot its resumption (held %d)", w.count())
	}
}
