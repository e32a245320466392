package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

var chainDAG = core.DAG{DagID: "chain", Tasks: []core.Task{
	{TaskID: "a", Operator: "noop", Retries: 1},
	{TaskID: "b", Operator: "noop", DependsOn: []string{"a"}},
}}

func TestTrigger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0.Add(123456789 * time.Nanosecond))
	syncDAG(t, st, chainDAG)

	wake := st.Subscribe(ctx, store.ChannelScheduler)
	run, err := newSvc(st, clk).TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", Conf: json.RawMessage(` {"x": 1} `)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler was not notified")
	}
	if want := "manual__2025-03-01T12:00:00.123456Z"; run.RunID != want {
		t.Errorf("run_id = %q, want %q", run.RunID, want)
	}
	got, err := st.DagRunGet(ctx, "chain", run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != core.RunQueued || got.RunType != core.RunManual || string(got.Conf) != `{"x":1}` {
		t.Errorf("run = %+v, want queued manual with conf {\"x\":1}", got)
	}
	if got.LogicalDate == nil || !got.LogicalDate.Equal(clk.Now().Truncate(time.Microsecond)) ||
		got.DataIntervalStart == nil || !got.DataIntervalStart.Equal(*got.LogicalDate) {
		t.Errorf("logical date %v, interval start %v, want both now", got.LogicalDate, got.DataIntervalStart)
	}
	tis := listTIs(t, st, got.ID)
	if len(tis) != 2 || tis["a"].State != core.TINone || tis["a"].MaxTries != 2 || tis["b"].MapIndex != core.NoMapIndex {
		t.Errorf("task instances = %+v, want a and b in state none, a with max_tries 2", tis)
	}

	// Explicit run id and logical date; the same run id again conflicts.
	ld := t0.Add(-time.Hour)
	if _, err := newSvc(st, clk).TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", RunID: "mine", LogicalDate: &ld}); err != nil {
		t.Fatal(err)
	}
	_, err = newSvc(st, clk).TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", RunID: "mine"})
	if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), `"mine"`) {
		t.Errorf("duplicate run id: err = %v, want ErrConflict naming the run", err)
	}
}

// TestTriggerInfersTheManualInterval checks that a manual run that names no
// data interval gets the one its DAG's timetable infers at its logical date
// (Airflow's infer_manual_data_interval), and one that names it keeps it.
func TestTriggerInfersTheManualInterval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0) // 2025-03-01T12:00:00Z
	start := t0.AddDate(0, -1, 0)
	daily := core.DAG{DagID: "daily", Schedule: "@daily", StartDate: &start, Tasks: []core.Task{{TaskID: "a", Operator: "noop"}}}
	hourly := core.DAG{DagID: "hourly", Schedule: "@hourly", Timetable: "CronTriggerTimetable", TimetableInterval: core.Duration(6 * time.Hour),
		StartDate: &start, Tasks: []core.Task{{TaskID: "a", Operator: "noop"}}}
	syncDAG(t, st, daily)
	syncDAG(t, st, hourly)
	day := t0.Truncate(24 * time.Hour)
	given := t0.Add(-time.Minute)
	tests := []struct {
		name       string
		p          runs.TriggerParams
		start, end time.Time
	}{
		{"daily: the day before", runs.TriggerParams{DagID: "daily", RunID: "d1"}, day.AddDate(0, 0, -1), day},
		{"daily: an interval given", runs.TriggerParams{DagID: "daily", RunID: "d2", DataIntervalStart: &given}, given, t0},
		{"daily: not a manual run", runs.TriggerParams{DagID: "daily", RunID: "d3", RunType: core.RunAssetTriggered}, t0, t0},
		{"trigger timetable: its interval", runs.TriggerParams{DagID: "hourly", RunID: "h1"}, t0.Add(-6 * time.Hour), t0},
		{"none: the logical date", runs.TriggerParams{DagID: "chain", RunID: "c1"}, t0, t0},
	}
	syncDAG(t, st, chainDAG)
	for _, tc := range tests {
		run, err := newSvc(st, clk).TriggerRun(ctx, core.System, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !run.LogicalDate.Equal(t0) || !run.DataIntervalStart.Equal(tc.start) || !run.DataIntervalEnd.Equal(tc.end) {
			t.Errorf("%s: logical date %v, data interval %v–%v; want %v, %v–%v", tc.name,
				run.LogicalDate, run.DataIntervalStart, run.DataIntervalEnd, t0, tc.start, tc.end)
		}
	}
}

func TestTriggerRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	syncDAG(t, st, chainDAG)
	before := t0.Add(-time.Hour)
	tests := []struct {
		name string
		p    runs.TriggerParams
		is   error
		msg  string
	}{
		{"unknown dag", runs.TriggerParams{DagID: "nope"}, core.ErrNotFound, `dag "nope": no such DAG`},
		{"conf list", runs.TriggerParams{DagID: "chain", Conf: json.RawMessage(`[1]`)}, core.ErrInvalid, "conf must be a JSON object"},
		{"conf garbage", runs.TriggerParams{DagID: "chain", Conf: json.RawMessage(`{x`)}, core.ErrInvalid, "conf must be a JSON object"},
		{"blank run id", runs.TriggerParams{DagID: "chain", RunID: "  "}, core.ErrInvalid, "run_id must not be blank"},
		{"slash in run id", runs.TriggerParams{DagID: "chain", RunID: "a/b"}, core.ErrInvalid, "must not contain '/'"},
		{"long run id", runs.TriggerParams{DagID: "chain", RunID: strings.Repeat("x", 251)}, core.ErrInvalid, "at most 250"},
		{"bad run type", runs.TriggerParams{DagID: "chain", RunType: "weird"}, core.ErrInvalid, `run_type "weird"`},
		{"interval backwards", runs.TriggerParams{DagID: "chain", DataIntervalEnd: &before}, core.ErrInvalid, "before its start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newSvc(st, clk).TriggerRun(ctx, core.System, tt.p)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tt.is, tt.msg)
			}
		})
	}
	list, err := st.DagRunList(ctx, &store.DagRunListParams{DagID: "chain"})
	if err != nil || len(list) != 0 {
		t.Errorf("runs after rejected triggers: %d (err %v), want none", len(list), err)
	}
}

// finishRun drives a run's instances to the given states through the
// worker's store calls (claim, start, finish) and marks the run done.
func finishRun(t *testing.T, st store.Store, run *core.DagRun, states map[string]core.TIState, runState core.DagRunState) {
	t.Helper()
	ctx := context.Background()
	for _, ti := range listTIs(t, st, run.ID) {
		want := states[ti.TaskID]
		if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
			IDs: []string{ti.ID}, To: core.TIQueued, Now: t0,
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.TaskInstanceClaim(ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Queues: []string{core.DefaultQueue}, Limit: 10, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.TaskInstanceStart(ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: "w", Now: t0}); err != nil {
			t.Fatal(err)
		}
		if err := st.TaskInstanceFinish(ctx, &store.TaskInstanceFinishParams{ID: ti.ID, State: want, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, To: runState, Now: t0}); err != nil {
		t.Fatal(err)
	}
}

// failedChainRun triggers a chain run in a fresh store and finishes it with
// a succeeded and b failed.
func failedChainRun(t *testing.T) (store.Store, *clocktest.Clock, *core.DagRun) {
	t.Helper()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	syncDAG(t, st, chainDAG)
	run, err := newSvc(st, clk).TriggerRun(context.Background(), core.System, runs.TriggerParams{DagID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	finishRun(t, st, run, map[string]core.TIState{"a": core.TISuccess, "b": core.TIFailed}, core.RunFailed)
	return st, clk, run
}

func TestClearTaskInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, run := failedChainRun(t)
	before := listTIs(t, st, run.ID)
	if err := st.XComSet(ctx, &core.XCom{DagID: "chain", RunID: run.RunID, TaskID: "a", MapIndex: -1,
		Key: core.DefaultXComKey, Value: json.RawMessage(`1`), Timestamp: t0}); err != nil {
		t.Fatal(err)
	}

	if err := clearTasks(ctx, st, clk, run, false, "a"); err != nil {
		t.Fatal(err)
	}
	after := listTIs(t, st, run.ID)
	a := after["a"]
	if a.State != core.TINone || a.ID == before["a"].ID || a.TryNumber != before["a"].TryNumber+1 {
		t.Errorf("cleared a = state %q id changed %v try %d, want none, new id, try %d",
			a.State, a.ID != before["a"].ID, a.TryNumber, before["a"].TryNumber+1)
	}
	// a has retries: 1, so the new try must be allowed one retry again.
	if a.MaxTries != a.TryNumber+1 {
		t.Errorf("max_tries = %d after clear at try %d, want %d", a.MaxTries, a.TryNumber, a.TryNumber+1)
	}
	if after["b"].State != core.TIFailed {
		t.Errorf("b = %q, want untouched failed", after["b"].State)
	}
	if _, err := st.XComGet(ctx, "chain", run.RunID, "a", -1, core.DefaultXComKey); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("xcom after clear: err = %v, want ErrNotFound", err)
	}
	hist, err := st.TaskInstanceHistory(ctx, "chain", run.RunID, "a", -1)
	if err != nil || len(hist) != 1 || hist[0].State != core.TISuccess {
		t.Errorf("history = %+v (err %v), want the successful try", hist, err)
	}
	got, _ := st.DagRunGet(ctx, "chain", run.RunID)
	if got.State != core.RunQueued {
		t.Errorf("run state = %q, want queued again", got.State)
	}

	if err := clearTasks(ctx, st, clk, run, false, "nope"); !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown task: err = %v, want ErrNotFound naming it", err)
	}
}

func TestClearDagRunOnlyFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, run := failedChainRun(t)

	if _, err := newSvc(st, clk).Clear(ctx, core.System, service.ClearParams{DagID: "chain", RunID: run.RunID, OnlyFailed: true}); err != nil {
		t.Fatal(err)
	}
	tis := listTIs(t, st, run.ID)
	if tis["a"].State != core.TISuccess || tis["b"].State != core.TINone {
		t.Errorf("after clearing failed: a=%q b=%q, want success and none", tis["a"].State, tis["b"].State)
	}
	if _, err := newSvc(st, clk).Clear(ctx, core.System, service.ClearParams{DagID: "chain", RunID: run.RunID}); err != nil {
		t.Fatal(err)
	}
	tis = listTIs(t, st, run.ID)
	if tis["a"].State != core.TINone || tis["b"].State != core.TINone {
		t.Errorf("after clearing all: a=%q b=%q, want none and none", tis["a"].State, tis["b"].State)
	}
	_, err := newSvc(st, clk).Clear(ctx, core.System, service.ClearParams{DagID: "chain", RunID: "missing"})
	if !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("unknown run: err = %v, want ErrNotFound naming the run", err)
	}
}

func TestMarkTaskInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, run := failedChainRun(t)
	b := listTIs(t, st, run.ID)["b"]

	if _, err := newSvc(st, clk).MarkTaskInstance(ctx, core.System, keyOf(&b), core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if got := listTIs(t, st, run.ID)["b"]; got.State != core.TISuccess || got.ID != b.ID {
		t.Errorf("b = %q (id %s), want success with the same try", got.State, got.ID)
	}
	if got, _ := st.DagRunGet(ctx, "chain", run.RunID); got.State != core.RunRunning {
		t.Errorf("run = %q, want running so the scheduler re-evaluates it", got.State)
	}
	if _, err := newSvc(st, clk).MarkTaskInstance(ctx, core.System, keyOf(&b), core.TIRunning); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("mark running: err = %v, want ErrInvalid", err)
	}
	if _, err := newSvc(st, clk).MarkTaskInstance(ctx, core.System, core.TIKey{DagID: "chain", RunID: run.RunID, TaskID: "nope", MapIndex: -1}, core.TIFailed); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("mark unknown: err = %v, want ErrNotFound", err)
	}
}

// A mark selects as Airflow's set_task_instance_state: the task's
// instance, its upstream and downstream tasks, the same tasks in earlier
// and later runs; those already in the state are left out; a dry run
// changes nothing. Carried out, it changes what it listed, reopens the
// finished runs, and is audited with its options.
func TestMarkSelects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	syncDAG(t, st, core.DAG{DagID: "abc", Tasks: []core.Task{{TaskID: "a", Operator: "noop"},
		{TaskID: "b", Operator: "noop", DependsOn: []string{"a"}}, {TaskID: "c", Operator: "noop", DependsOn: []string{"b"}}}})
	svc := newSvc(st, clk)
	for i, id := range []string{"r1", "r2", "r3"} {
		day := t0.Add(time.Duration(i) * 24 * time.Hour)
		run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "abc", RunID: id, LogicalDate: &day})
		if err != nil {
			t.Fatal(err)
		}
		finishRun(t, st, run, map[string]core.TIState{"a": core.TISuccess, "b": core.TIFailed, "c": core.TISkipped}, core.RunFailed)
	}
	for name, c := range map[string]struct {
		p    service.MarkParams
		want []string
	}{
		"the task alone":              {service.MarkParams{}, []string{"r2/b"}},
		"its upstream (a is success)": {service.MarkParams{Upstream: true}, []string{"r2/b"}},
		"its downstream":              {service.MarkParams{Downstream: true}, []string{"r2/b", "r2/c"}},
		"earlier runs":                {service.MarkParams{Past: true}, []string{"r1/b", "r2/b"}},
		"later runs":                  {service.MarkParams{Future: true}, []string{"r2/b", "r3/b"}},
		"every run, downstream too":   {service.MarkParams{Past: true, Future: true, Downstream: true}, []string{"r1/b", "r1/c", "r2/b", "r2/c", "r3/b", "r3/c"}},
	} {
		p := c.p
		p.DagID, p.RunID, p.TaskID, p.State, p.DryRun = "abc", "r2", "b", core.TISuccess, true
		tis, err := svc.Mark(ctx, core.Actor{Name: "ann", Role: core.RoleOp}, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, ti := range tis {
			got = append(got, ti.RunID+"/"+ti.TaskID)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: dry run selects %v, want %v", name, got, c.want)
		}
	}
	if a, _ := st.AuditLogList(ctx, &store.AuditLogListParams{Action: "task_instance.mark"}); len(a) != 0 {
		t.Fatalf("dry runs were audited: %+v", a)
	}

	op := core.Actor{Name: "ann", Role: core.RoleOp}
	tis, err := svc.Mark(ctx, op, service.MarkParams{DagID: "abc", RunID: "r2", TaskID: "b", State: core.TISuccess, Future: true, Downstream: true})
	if err != nil || len(tis) != 4 {
		t.Fatalf("mark b with later runs and downstream: %d, %v", len(tis), err)
	}
	for _, ti := range tis {
		if ti.State != core.TISuccess {
			t.Errorf("%s/%s after the mark = %s", ti.RunID, ti.TaskID, ti.State)
		}
	}
	for id, want := range map[string]core.DagRunState{"r1": core.RunFailed, "r2": core.RunRunning, "r3": core.RunRunning} {
		if run, _ := st.DagRunGet(ctx, "abc", id); run.State != want {
			t.Errorf("run %s after the mark = %s, want %s", id, run.State, want)
		}
	}
	a, _ := st.AuditLogList(ctx, &store.AuditLogListParams{Action: "task_instance.mark"})
	if len(a) != 1 || a[0].Target != "abc/r2/b" || !strings.Contains(a[0].Detail, "new_state=success downstream=true future=true") ||
		!strings.Contains(a[0].Detail, "abc/r3/c") {
		t.Errorf("the mark's audit = %+v, want one naming its options and the instances", a)
	}
	if _, err := svc.Mark(ctx, core.System, service.MarkParams{DagID: "abc", RunID: "r2", TaskID: "b", State: core.TISuccess, MapIndex: ptr(2)}); !errors.Is(err, core.ErrNotFound) ||
		!strings.Contains(err.Error(), "map_index 2") {
		t.Errorf("mark of a map index the task lacks: %v, want ErrNotFound naming it", err)
	}
	if _, err := svc.Mark(ctx, core.System, service.MarkParams{DagID: "abc", RunID: "nope", TaskID: "b", State: core.TISuccess}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("mark in an unknown run: %v, want ErrNotFound", err)
	}
}

// docs/requirements.md#ts-4: with [state_store] clear_on_success, marking a
// task instance success clears its task state as a successful try does;
// marking it failed keeps it, and without the setting success keeps it too.
func TestMarkSuccessClearsTaskState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, run := failedChainRun(t)
	b := listTIs(t, st, run.ID)["b"]
	scope := core.TaskScope("chain", run.RunID, "b", -1)
	keys := func() int {
		n, err := st.StateCount(ctx, &store.StateListParams{Kind: core.StateTask, DagID: "chain", RunID: run.RunID, TaskID: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	set := func() {
		if err := st.StateSet(ctx, &store.StateSetParams{Scope: scope, Key: "cursor", Value: json.RawMessage(`7`), Now: clk.Now(),
			By: core.UserWriter("ada")}); err != nil {
			t.Fatal(err)
		}
	}
	clearing := service.New(service.Config{Store: st, Clock: clk, ClearTaskStateOnSuccess: true})
	set()
	if _, err := newSvc(st, clk).MarkTaskInstance(ctx, core.System, keyOf(&b), core.TISuccess); err != nil || keys() != 1 {
		t.Fatalf("marked success without clear_on_success: %v, %d keys; want the key kept", err, keys())
	}
	if _, err := clearing.MarkTaskInstance(ctx, core.System, keyOf(&b), core.TIFailed); err != nil || keys() != 1 {
		t.Fatalf("marked failed with clear_on_success: %v, %d keys; want the key kept", err, keys())
	}
	if _, err := clearing.MarkTaskInstance(ctx, core.System, keyOf(&b), core.TISuccess); err != nil || keys() != 0 {
		t.Errorf("marked success with clear_on_success: %v, %d keys; want none", err, keys())
	}
}

// Airflow's clear selections: --downstream adds the tasks downstream of the
// named ones, and --start-date/--end-date keep the runs whose logical date
// is within them (both inclusive); an end before the start is refused and
// clears nothing.
func TestClearDownstreamAndDateRange(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	syncDAG(t, st, chainDAG)
	day := func(n int) *time.Time { d := t0.AddDate(0, 0, n); return &d }
	var all []*core.DagRun
	for i := range 3 {
		run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", LogicalDate: day(i)})
		if err != nil {
			t.Fatal(err)
		}
		finishRun(t, st, run, map[string]core.TIState{"a": core.TISuccess, "b": core.TISuccess}, core.RunSuccess)
		all = append(all, run)
	}
	selected := func(p service.ClearParams) map[string]bool {
		t.Helper()
		p.DagID, p.DryRun = "chain", true
		tis, err := svc.Clear(ctx, core.System, p)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, ti := range tis {
			out[ti.RunID+"/"+ti.TaskID] = true
		}
		return out
	}
	r0, r1, r2 := all[0].RunID, all[1].RunID, all[2].RunID
	if got := selected(service.ClearParams{TaskIDs: []string{"a"}, Downstream: true, StartDate: day(1), EndDate: day(1)}); len(got) != 2 || !got[r1+"/a"] || !got[r1+"/b"] {
		t.Errorf("a with downstream on day 1 = %v, want a and b of %s", got, r1)
	}
	if got := selected(service.ClearParams{TaskIDs: []string{"a"}}); len(got) != 3 || got[r0+"/b"] {
		t.Errorf("a without downstream = %v, want a of the 3 runs only", got)
	}
	if got := selected(service.ClearParams{StartDate: day(1)}); len(got) != 4 || got[r0+"/a"] || !got[r2+"/b"] {
		t.Errorf("from day 1 = %v, want both tasks of %s and %s", got, r1, r2)
	}
	_, err := svc.Clear(ctx, core.System, service.ClearParams{DagID: "chain", StartDate: day(2), EndDate: day(1)})
	if !errors.Is(err, core.ErrInvalid) {
		t.Errorf("end before start: err = %v, want ErrInvalid", err)
	}
	if tis := listTIs(t, st, all[2].ID); tis["a"].State != core.TISuccess {
		t.Errorf("a refused clear changed %s: a = %q", r2, tis["a"].State)
	}
}

func TestMarkRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, run := failedChainRun(t)

	op := core.Actor{Name: "ann", Role: core.RoleOp}
	got, err := newSvc(st, clk).MarkRun(ctx, op, "chain", run.RunID, core.RunSuccess)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != core.RunSuccess || got.EndDate == nil {
		t.Errorf("run = %q ended %v, want success with an end date", got.State, got.EndDate)
	}
	if tis := listTIs(t, st, run.ID); tis["a"].State != core.TISuccess || tis["b"].State != core.TISuccess {
		t.Errorf("after mark success: a=%q b=%q, want both success", tis["a"].State, tis["b"].State)
	}
	entries, err := st.AuditLogList(ctx, &store.AuditLogListParams{Action: "dag_run.mark"})
	if err != nil || len(entries) != 1 || entries[0].Target != "chain/"+run.RunID || entries[0].Detail != "new_state=success success=1" {
		t.Errorf("audit = %+v (err %v), want one dag_run.mark of chain/%s with new_state=success success=1", entries, err, run.RunID)
	}

	// A fresh run marked failed: nothing ran, so every instance is skipped.
	fresh, err := newSvc(st, clk).TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", RunID: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newSvc(st, clk).MarkRun(ctx, core.System, "chain", "fresh", core.RunFailed); err != nil {
		t.Fatal(err)
	}
	if tis := listTIs(t, st, fresh.ID); tis["a"].State != core.TISkipped || tis["b"].State != core.TISkipped {
		t.Errorf("after mark failed: a=%q b=%q, want both skipped", tis["a"].State, tis["b"].State)
	}

	if _, err := newSvc(st, clk).MarkRun(ctx, core.System, "chain", "fresh", core.RunRunning); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("mark running: err = %v, want ErrInvalid", err)
	}
	if _, err := newSvc(st, clk).MarkRun(ctx, core.System, "chain", "missing", core.RunFailed); !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("mark unknown run: err = %v, want ErrNotFound naming it", err)
	}
	viewer := core.Actor{Name: "v", Role: core.RoleViewer}
	if _, err := newSvc(st, clk).MarkRun(ctx, viewer, "chain", "fresh", core.RunSuccess); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("viewer marks: err = %v, want ErrForbidden", err)
	}
}

// FailUnfinishedRun fails a run as MarkRun does, and leaves a run that has
// finished as it is, its instances included, with nothing audited.
func TestFailUnfinishedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, finished := failedChainRun(t)
	svc := newSvc(st, clk)
	op := core.Actor{Name: "ann", Role: core.RoleOp}
	before := listTIs(t, st, finished.ID)
	if got, err := svc.FailUnfinishedRun(ctx, op, "chain", finished.RunID); err != nil || got != nil {
		t.Fatalf("a failed run: %v, %v; want nil, nil (nothing to do)", got, err)
	}
	if diff := cmp.Diff(before, listTIs(t, st, finished.ID)); diff != "" {
		t.Errorf("a finished run's instances changed (-before +after):\n%s", diff)
	}
	running, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", RunID: "running", Running: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.FailUnfinishedRun(ctx, op, "chain", "running")
	if err != nil || got == nil || got.State != core.RunFailed {
		t.Fatalf("a running run: %+v, %v; want it failed", got, err)
	}
	if tis := listTIs(t, st, running.ID); tis["a"].State != core.TISkipped || tis["b"].State != core.TISkipped {
		t.Errorf("after: a=%q b=%q, want both skipped", tis["a"].State, tis["b"].State)
	}
	entries, err := st.AuditLogList(ctx, &store.AuditLogListParams{Action: "dag_run.mark"})
	if err != nil || len(entries) != 1 || entries[0].Target != "chain/running" {
		t.Errorf("audit = %+v (err %v), want one dag_run.mark of chain/running", entries, err)
	}
}

// endsFirst is a store on which a run ends just before each conditional
// change of its state, as when its last try's end commits first.
type endsFirst struct{ store.Store }

func (s endsFirst) WithTx(ctx context.Context, fn func(store.Store) error) error {
	return s.Store.WithTx(ctx, func(tx store.Store) error { return fn(endsFirst{tx}) })
}

func (s endsFirst) DagRunSetState(ctx context.Context, p *store.DagRunSetStateParams) (bool, error) {
	if len(p.From) > 0 {
		if _, err := s.Store.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: p.ID, To: core.RunSuccess, Now: p.Now}); err != nil {
			return false, err
		}
	}
	return s.Store.DagRunSetState(ctx, p)
}

// A run that ends while FailUnfinishedRun marks it keeps its end: the
// instances' marks roll back with the change, and nothing is audited.
func TestFailUnfinishedRunLosesToAnEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	syncDAG(t, st, chainDAG)
	run, err := newSvc(st, clk).TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", Running: true})
	if err != nil {
		t.Fatal(err)
	}
	before := listTIs(t, st, run.ID)
	got, err := newSvc(endsFirst{st}, clk).FailUnfinishedRun(ctx, core.Actor{Name: "ann", Role: core.RoleOp}, "chain", run.RunID)
	if err != nil || got != nil {
		t.Fatalf("FailUnfinishedRun = %+v, %v; want nil, nil (the run ended first)", got, err)
	}
	if diff := cmp.Diff(before, listTIs(t, st, run.ID)); diff != "" {
		t.Errorf("the instances changed (-before +after):\n%s", diff)
	}
	if entries, err := st.AuditLogList(ctx, &store.AuditLogListParams{Action: "dag_run.mark"}); err != nil || len(entries) != 0 {
		t.Errorf("audit = %+v (%v), want nothing", entries, err)
	}
}

// MarkTask marks each mapped instance of a task (as Airflow's grid does),
// or the one instance of an unmapped task; a task with no instance in the
// run is not found, and a state that cannot be marked changes nothing.
func TestMarkTaskMapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	spec := core.DAG{DagID: "fan", Tasks: []core.Task{{TaskID: "m", Operator: "noop"}, {TaskID: "one", Operator: "noop"}}}
	syncDAG(t, st, spec)
	v, err := st.DagVersionLatest(ctx, "fan")
	if err != nil {
		t.Fatal(err)
	}
	var tis []store.NewTaskInstance
	for i, task := range []string{"m", "m", "m", "one"} {
		mi := i
		if task == "one" {
			mi = core.NoMapIndex
		}
		tis = append(tis, store.NewTaskInstance{ID: fmt.Sprintf("ti-%d", i), TaskID: task, MapIndex: mi, MaxTries: 1, Operator: "noop",
			State: core.TIFailed, PriorityWeight: 1})
	}
	run, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "fan", RunID: "r", RunType: core.RunManual, State: core.RunFailed,
		DagVersionID: v.ID, Now: t0, TaskInstances: tis})
	if err != nil {
		t.Fatal(err)
	}
	svc := newSvc(st, clk)
	if _, err := svc.Mark(ctx, core.System, service.MarkParams{DagID: "fan", RunID: "r", TaskID: "m", State: core.TIRunning}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("mark running: %v, want invalid", err)
	}
	marked, err := svc.Mark(ctx, core.System, service.MarkParams{DagID: "fan", RunID: "r", TaskID: "m", State: core.TISuccess})
	if err != nil || len(marked) != 3 {
		t.Fatalf("mark m: %d marked, %v; want its 3 mapped instances", len(marked), err)
	}
	all, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range all {
		if want := map[string]core.TIState{"m": core.TISuccess, "one": core.TIFailed}[ti.TaskID]; ti.State != want {
			t.Errorf("%s[%d] = %s, want %s", ti.TaskID, ti.MapIndex, ti.State, want)
		}
	}
	if marked, err := svc.Mark(ctx, core.System, service.MarkParams{DagID: "fan", RunID: "r", TaskID: "one", State: core.TISuccess}); err != nil || len(marked) != 1 {
		t.Errorf("mark one: %d marked, %v; want 1", len(marked), err)
	}
	if _, err := svc.Mark(ctx, core.System, service.MarkParams{DagID: "fan", RunID: "r", TaskID: "nope", State: core.TISuccess}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("mark a task with no instance: %v, want not found", err)
	}
}
