package scheduler_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// A deferral's timeout is noticed within the poll interval, though the
// scheduler looks for timeouts once per interval rather than on every pass.
func TestDeferralTimeoutNoticedWithinThePollInterval(t *testing.T) {
	t.Parallel()
	dag := core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "wait", Operator: "noop", StartTrigger: &core.Deferral{
		Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1h"}`)},
		Timeout: core.Duration(time.Second)}}}}
	h := newHarness(t, dag)
	run := h.trigger("d")
	h.step() // starts the run and defers wait on its trigger
	if got := h.ti(run, "wait"); got.State != core.TIDeferred {
		t.Fatalf("wait is %s, want deferred", got.State)
	}
	h.clk.Advance(1500 * time.Millisecond) // the timeout passed, the poll interval (2 s) did not
	h.step()
	if got := h.ti(run, "wait"); got.State != core.TIDeferred {
		t.Fatalf("wait is %s 1.5 s in, want still deferred until the next look for timeouts", got.State)
	}
	h.clk.Advance(500 * time.Millisecond) // one poll interval since the last look
	h.step()
	got := h.ti(run, "wait")
	if (got.State != core.TIScheduled && got.State != core.TIQueued) || got.NextMethod != "__fail__" {
		t.Fatalf("wait is %s (next method %q) after the poll interval, want resumed to fail by its timeout", got.State, got.NextMethod)
	}
}
