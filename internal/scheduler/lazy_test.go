package scheduler_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// lazyDAG: "fetch" is a deferrable sensor whose command trigger streams,
// "insert" iterates over it, "report" waits for every insert.
func lazyDAG() core.DAG {
	return core.DAG{DagID: "lazy", Tasks: []core.Task{
		{TaskID: "fetch", Operator: "sensor", StartTrigger: &core.Deferral{
			Trigger: core.TriggerSpec{Type: "command", Kwargs: json.RawMessage(`{"command":"true"}`)}}},
		{TaskID: "insert", Operator: "noop", Iterate: "fetch"},
		{TaskID: "report", Operator: "noop", DependsOn: []string{"insert"}},
	}}
}

// produce plays the triggerer running the producer's trigger: it claims
// the trigger and appends items (or, with end, closes the stream after
// them; failMsg fails it).
func (h *harness) produce(run *core.DagRun, items []any, end bool, failMsg string) {
	h.t.Helper()
	ctx := h.ctx
	svc := h.svc(h.clk)
	streamID := core.TaskStreamID(run.ID, "fetch")
	st, err := h.st.StreamGet(ctx, streamID)
	if err != nil {
		h.t.Fatalf("the producer's stream: %v", err)
	}
	if _, err := h.st.TriggerClaim(ctx, &store.TriggerClaimParams{TriggererID: "t1", AliveSince: h.clk.Now(), Limit: 10}); err != nil {
		h.t.Fatal(err)
	}
	if len(items) > 0 {
		payloads := make([]json.RawMessage, len(items))
		for i, it := range items {
			payloads[i], _ = json.Marshal(it)
		}
		res, err := svc.AppendTriggerEvents(ctx, st.TriggerID, "t1", streamID, payloads)
		if err != nil || res.Accepted != len(items) {
			h.t.Fatalf("append %d items: %v (accepted %v)", len(items), err, res)
		}
	}
	if end {
		if err := svc.CloseTriggerStream(ctx, st.TriggerID, "t1", streamID, failMsg); err != nil {
			h.t.Fatal(err)
		}
	}
}

// mapped lists the map indexes of task's instances in run, with their
// "item" map argument.
func (h *harness) mapped(run *core.DagRun, task string) []string {
	var out []string
	for _, ti := range h.tis(run) {
		if ti.TaskID == task && ti.MapIndex >= 0 {
			out = append(out, fmt.Sprintf("%d=%s", ti.MapIndex, ti.MapArgs))
		}
	}
	slices.Sort(out)
	return out
}

// Items become instances as they arrive, each with its item, while the
// producer still produces; the downstream task waits for the stream to
// close and runs once, after every instance.
func TestLazyExpansionCreatesInstancesAsItemsArrive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, lazyDAG())
	run := h.trigger("lazy")
	h.step()
	if got := h.ti(run, "fetch"); got.State != core.TIDeferred {
		t.Fatalf("fetch is %s, want deferred on its streaming trigger", got.State)
	}
	if got := h.ti(run, "insert"); got.State != core.TINone {
		t.Fatalf("insert is %s before any item, want none (waiting)", got.State)
	}
	h.produce(run, []any{map[string]int{"page": 1}, map[string]int{"page": 2}}, false, "")
	h.step()
	if got, want := h.mapped(run, "insert"), []string{`0={"item":{"page":1}}`, `1={"item":{"page":2}}`}; !slices.Equal(got, want) {
		t.Fatalf("insert instances = %v, want %v", got, want)
	}
	st, err := h.st.StreamGet(h.ctx, core.TaskStreamID(run.ID, "fetch"))
	if err != nil || st.Pending != 0 {
		t.Fatalf("stream after expansion: %+v, %v; want its 2 events consumed", st, err)
	}
	if ran := h.work(succeed); !slices.Equal(ran, []string{"insert[0]", "insert[1]"}) {
		t.Fatalf("first round ran %v, want the two instances while fetch is still deferred", ran)
	}
	h.step()
	if got := h.ti(run, "report"); got.State != core.TINone {
		t.Fatalf("report is %s while the stream is open, want none", got.State)
	}
	h.produce(run, []any{map[string]int{"page": 3}}, true, "")
	rounds, state := h.drive(run, succeed)
	if state != core.RunSuccess {
		t.Fatalf("run ended %s, want success: %v", state, h.states(run))
	}
	all := strings.Join(slices.Concat(rounds...), " ")
	if strings.Count(all, "report") != 1 || !strings.Contains(all, "insert[2]") || !strings.Contains(all, "fetch") {
		t.Fatalf("rounds = %v, want fetch, insert[2] and report once", rounds)
	}
	if _, ok := h.states(run)["insert"]; ok {
		t.Fatalf("the placeholder is still there: %v", h.states(run))
	}
	if got := h.mapped(run, "insert"); len(got) != 3 {
		t.Fatalf("insert instances = %v, want 3", got)
	}
}

// A stream that fails midway: the items so far run, the rest of the task
// is upstream_failed, and so is its downstream; the run fails.
func TestLazyExpansionOverAFailedStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, lazyDAG())
	run := h.trigger("lazy")
	h.step()
	h.produce(run, []any{1}, true, "the command trigger failed: exit 2")
	_, state := h.drive(run, succeed)
	got := h.states(run)
	if state != core.RunFailed || got["insert[0]"] != "success" || got["insert"] != "upstream_failed" ||
		got["report"] != "upstream_failed" {
		t.Fatalf("run %s, states %v; want insert[0] success, the placeholder and report upstream_failed", state, got)
	}
}

// A stream closed without an item skips the task and its downstream, as
// an empty expand does.
func TestLazyExpansionOverAnEmptyStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, lazyDAG())
	run := h.trigger("lazy")
	h.step()
	h.produce(run, nil, true, "")
	_, state := h.drive(run, succeed)
	got := h.states(run)
	if state != core.RunSuccess || got["insert"] != "skipped" || got["report"] != "skipped" || got["fetch"] != "success" {
		t.Fatalf("run %s, states %v; want fetch success, insert and report skipped", state, got)
	}
}
