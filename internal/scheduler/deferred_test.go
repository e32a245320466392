package scheduler_test

import (
	"encoding/json"
	"strings"
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

// A task whose start trigger's kwargs render to what the trigger refuses
// is not failed silently: it goes to a worker step that fails it with the
// reason (next method __fail__), so the reason is in the try's log and
// retries follow as for any failure.
func TestStartTriggerThatCannotStartFailsWithItsReason(t *testing.T) {
	t.Parallel()
	dag := core.DAG{DagID: "d", Params: map[string]any{"when": "not a time"}, Tasks: []core.Task{{TaskID: "wait", Operator: "sensor",
		StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "datetime", Kwargs: json.RawMessage(`{"moment":"{{ .params.when }}"}`)}}}}}
	h := newHarness(t, dag)
	run := h.trigger("d")
	h.step()
	got := h.ti(run, "wait")
	if (got.State != core.TIScheduled && got.State != core.TIQueued) || got.NextMethod != core.NextMethodFail ||
		!strings.Contains(string(got.NextKwargs), `the task cannot start from its trigger`) ||
		!strings.Contains(string(got.NextKwargs), `kwarg \"moment\" must be an RFC 3339 time`) {
		t.Fatalf("wait = %s, next %q %s; want on its way to a worker to fail, naming the bad moment", got.State, got.NextMethod, got.NextKwargs)
	}
}
