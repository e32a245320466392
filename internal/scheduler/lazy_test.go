package scheduler_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
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

// A pushing producer (stream: true) that succeeds without closing its
// stream has it closed by the scheduler: the expansion completes and the
// downstream task runs. One that fails leaves its items' instances to run
// and fails the rest of the iterating task.
func TestLazyExpansionOverAPushingProducer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		produce  core.TIState
		runState core.DagRunState
		report   string
	}{
		{"succeeds without closing", core.TISuccess, core.RunSuccess, "success"},
		{"fails", core.TIFailed, core.RunFailed, "upstream_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dag := core.DAG{DagID: "push", Tasks: []core.Task{
				{TaskID: "fetch", Operator: "noop", Stream: true},
				{TaskID: "insert", Operator: "noop", Iterate: "fetch"},
				{TaskID: "report", Operator: "noop", DependsOn: []string{"insert"}},
			}}
			h := newHarness(t, dag)
			run := h.trigger("push")
			h.step()
			fetch := h.claim("w1", 1)
			if len(fetch) != 1 || fetch[0].TaskID != "fetch" {
				t.Fatalf("claimed %v, want fetch", fetch)
			}
			if _, err := h.svc(h.clk).PushFromTry(h.ctx, &fetch[0], service.StreamPush{Items: []json.RawMessage{[]byte(`"a"`), []byte(`"b"`)}}); err != nil {
				t.Fatal(err)
			}
			h.step()
			if got := h.mapped(run, "insert"); len(got) != 2 {
				t.Fatalf("insert instances while fetch runs = %v, want 2", got)
			}
			h.finish(fetch[0], func(core.TaskInstance) (core.TIState, any) { return tc.produce, nil })
			_, state := h.drive(run, succeed)
			got := h.states(run)
			if state != tc.runState || got["insert[0]"] != "success" || got["insert[1]"] != "success" || got["report"] != tc.report {
				t.Fatalf("run %s, states %v; want %s, both inserts success, report %s", state, got, tc.runState, tc.report)
			}
		})
	}
}

// Two schedulers take turns: instances one creates are merged into the
// other's incrementally read view without losing the placeholder, so the
// other goes on expanding the stream (and the downstream task waits).
func TestLazyExpansionAcrossSchedulers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, lazyDAG())
	other := &scheduler.Scheduler{Store: h.st, Clock: h.clk, Config: scheduler.Config{HeartbeatTimeout: time.Minute}}
	run := h.trigger("lazy")
	h.step()
	h.produce(run, []any{0, 1}, false, "")
	if err := other.RunOnce(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.step() // reads the other's two instances incrementally
	h.produce(run, []any{2}, false, "")
	h.step()
	if got := h.mapped(run, "insert"); len(got) != 3 {
		t.Fatalf("insert instances = %v, want 3: the first scheduler expands item 2 too", got)
	}
	if got := h.ti(run, "report"); got.State != core.TINone {
		t.Fatalf("report is %s while the stream is open, want none", got.State)
	}
}

// An expansion whose stream grows past [scheduler] max_map_length gets
// instances for the items within the cap only: the task fails, its
// downstream is upstream_failed, and its producer is stopped — the stream
// closed naming the cap (a later append is refused), the producer sensor
// failed with the same reason and its trigger deleted, so its triggerer
// stops running it — on each engine.
func TestLazyExpansionStopsAtItsCap(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st store.Store) {
		h := newHarnessOn(t, st, lazyDAG())
		h.s.Config.MaxMapLength = 3
		run := h.trigger("lazy")
		h.step()
		h.produce(run, []any{0, 1}, false, "")
		h.step()
		h.produce(run, []any{2, 3, 4}, false, "")
		h.step()
		if got := h.mapped(run, "insert"); len(got) != 3 {
			t.Fatalf("insert instances = %v, want the first 3 (the cap)", got)
		}
		states := h.states(run)
		if states["insert"] != "failed" || states["report"] != "upstream_failed" {
			t.Fatalf("states %v: want the placeholder failed and report upstream_failed", states)
		}
		sid := core.TaskStreamID(run.ID, "fetch")
		s, err := h.st.StreamGet(h.ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		const want = `task "insert" iterates over more than 3 items ([scheduler] max_map_length 3)`
		if !s.Closed || !strings.Contains(s.Error, want) {
			t.Fatalf("stream = %+v, want it closed with an error naming the cap", s)
		}
		if _, err := h.st.StreamAppend(h.ctx, &store.StreamAppendParams{StreamID: sid, Payloads: []json.RawMessage{[]byte("5")}, Now: h.clk.Now()}); err == nil {
			t.Error("an append after the cap was accepted")
		}
		fetch := h.ti(run, "fetch")
		if fetch.State == core.TIDeferred || fetch.TriggerID != nil {
			t.Errorf("the producer is %s on trigger %v, want it resumed into its failure", fetch.State, fetch.TriggerID)
		}
		if _, err := h.st.TriggerGet(h.ctx, s.TriggerID); err == nil {
			t.Errorf("the producer's trigger %d is still there: its triggerer would keep running it", s.TriggerID)
		}
		rounds, state := h.drive(run, succeed)
		if state != core.RunFailed {
			t.Fatalf("run ended %s (%v), want failed", state, rounds)
		}
		if got := h.mapped(run, "insert"); len(got) != 3 {
			t.Errorf("insert instances = %v after the run, want 3", got)
		}
	})
}
