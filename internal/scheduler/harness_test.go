package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// harness drives a scheduler over a real SQLite store, playing the worker
// through the store calls a worker makes (claim, start, finish).
type harness struct {
	t     testing.TB
	ctx   context.Context
	st    store.Store
	clk   *clocktest.Clock
	s     *scheduler.Scheduler
	specs map[string]*core.DAG
	// api is the job row of the api-server the simulated worker talks
	// through; each step refreshes its heartbeat unless apiDown.
	api     core.Job
	apiDown bool
}

func newHarness(t testing.TB, dags ...core.DAG) *harness {
	t.Helper()
	return newHarnessOn(t, sqlitetest.Open(t), dags...)
}

// newHarnessOn is newHarness over the given store.
func newHarnessOn(t testing.TB, st store.Store, dags ...core.DAG) *harness {
	t.Helper()
	ctx := context.Background()
	clk := clocktest.New(t0)
	h := &harness{t: t, ctx: ctx, st: st, clk: clk, specs: map[string]*core.DAG{},
		s:   &scheduler.Scheduler{Store: st, Clock: clk, Config: scheduler.Config{HeartbeatTimeout: time.Minute}},
		api: core.Job{ID: "api-1", Role: "api-server", Hostname: "h", PID: 1, StartedAt: t0.Add(-time.Hour)}}
	for i := range dags {
		h.sync(dags[i])
	}
	return h
}

// sync records spec as an active, unpaused DAG.
func (h *harness) sync(spec core.DAG) {
	h.t.Helper()
	if _, _, err := h.st.DagSync(h.ctx, &store.DagSyncParams{Spec: spec, Hash: fmt.Sprint(len(h.specs)), Now: h.clk.Now()}); err != nil {
		h.t.Fatal(err)
	}
	h.specs[spec.DagID] = &spec
}

func (h *harness) step() {
	h.t.Helper()
	if !h.apiDown {
		h.api.Heartbeat = h.clk.Now()
		if err := h.st.JobHeartbeat(h.ctx, &h.api); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := h.s.RunOnce(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) trigger(dagID string) *core.DagRun {
	h.t.Helper()
	run, err := h.svc(h.clk).TriggerRun(h.ctx, core.System, runs.TriggerParams{DagID: dagID, RunID: fmt.Sprintf("r%d", h.clk.Now().UnixNano())})
	if err != nil {
		h.t.Fatal(err)
	}
	h.clk.Advance(time.Microsecond) // distinct run ids
	return run
}

// outcome says how the simulated worker ends a try: its state and the
// return value it pushes (nil = none).
type outcome func(ti core.TaskInstance) (core.TIState, any)

func succeed(core.TaskInstance) (core.TIState, any) { return core.TISuccess, nil }

// claim claims up to limit queued instances as worker w and starts them.
func (h *harness) claim(w string, limit int) []core.TaskInstance {
	h.t.Helper()
	tis, err := h.st.TaskInstanceClaim(h.ctx, &store.TaskInstanceClaimParams{
		WorkerID: w, Queues: []string{core.DefaultQueue}, Limit: limit, Now: h.clk.Now()})
	if err != nil {
		h.t.Fatal(err)
	}
	for i := range tis {
		got, err := h.st.TaskInstanceStart(h.ctx, &store.TaskInstanceStartParams{ID: tis[i].ID, WorkerID: w, Now: h.clk.Now()})
		if err != nil {
			h.t.Fatal(err)
		}
		tis[i] = *got
	}
	return tis
}

// finish ends a running try as the worker would.
func (h *harness) finish(ti core.TaskInstance, out outcome) {
	h.t.Helper()
	state, ret := out(ti)
	if ret != nil {
		b, _ := json.Marshal(ret)
		if err := h.st.XComSet(h.ctx, &core.XCom{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex,
			Key: core.DefaultXComKey, Value: b, Timestamp: h.clk.Now()}); err != nil {
			h.t.Fatal(err)
		}
	}
	p := &store.TaskInstanceFinishParams{ID: ti.ID, State: state, Now: h.clk.Now()}
	if state == core.TIFailed && ti.TryNumber < ti.MaxTries {
		at := runs.NextRetryAt(h.specs[ti.DagID].Task(ti.TaskID), ti.TryNumber, h.clk.Now())
		p.State, p.NextRetryAt = core.TIUpForRetry, &at
	}
	if err := h.st.TaskInstanceFinish(h.ctx, p); err != nil {
		h.t.Fatal(err)
	}
}

// work runs every queued instance to its outcome and returns their keys.
func (h *harness) work(out outcome) []string {
	h.t.Helper()
	var keys []string
	for _, ti := range h.claim("w1", 1000) {
		h.finish(ti, out)
		keys = append(keys, key(ti))
	}
	sort.Strings(keys)
	return keys
}

// drive alternates scheduler passes and worker rounds until the run ends,
// and returns the keys run in each round.
func (h *harness) drive(run *core.DagRun, out outcome) ([][]string, core.DagRunState) {
	h.t.Helper()
	var rounds [][]string
	for range 50 {
		h.step()
		if r := h.run(run); r.State.Terminal() {
			return rounds, r.State
		}
		if ran := h.work(out); len(ran) > 0 {
			rounds = append(rounds, ran)
		}
	}
	h.t.Fatalf("run %s did not finish; instances: %v", run.RunID, h.states(run))
	return nil, ""
}

func (h *harness) run(run *core.DagRun) *core.DagRun {
	h.t.Helper()
	r, err := h.st.DagRunGetByID(h.ctx, run.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) tis(run *core.DagRun) []core.TaskInstance {
	h.t.Helper()
	tis, err := h.st.TaskInstanceList(h.ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		h.t.Fatal(err)
	}
	return tis
}

// states maps "task" or "task[i]" to its state name.
func (h *harness) states(run *core.DagRun) map[string]string {
	out := map[string]string{}
	for _, ti := range h.tis(run) {
		out[key(ti)] = ti.State.String()
	}
	return out
}

func key(ti core.TaskInstance) string {
	if ti.MapIndex == core.NoMapIndex {
		return ti.TaskID
	}
	return fmt.Sprintf("%s[%d]", ti.TaskID, ti.MapIndex)
}

// svc is a service over the harness's store with clock clk.
func (h *harness) svc(clk core.Clock) *service.Service {
	return service.New(service.Config{Store: h.st, Clock: clk})
}

// keyOf names a task instance for the service.
func keyOf(ti core.TaskInstance) core.TIKey {
	return core.TIKey{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex}
}
