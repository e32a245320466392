package scheduler

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weirflow/weir/internal/core"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// ti builds a task instance whose id is "task" or "task[i]".
func ti(task string, mapIndex int, state core.TIState) core.TaskInstance {
	id := task
	if mapIndex >= 0 {
		id = task + "[" + string(rune('0'+mapIndex)) + "]"
	}
	return core.TaskInstance{ID: id, TaskID: task, MapIndex: mapIndex, State: state}
}

func retryAt(task string, at time.Time) core.TaskInstance {
	x := ti(task, -1, core.TIUpForRetry)
	x.NextRetryAt = &at
	return x
}

// fanIn is up1, up2 (and up3) → down with the given rule.
func fanIn(rule core.TriggerRule, ups ...string) *core.DAG {
	d := &core.DAG{DagID: "d"}
	for _, u := range ups {
		d.Tasks = append(d.Tasks, core.Task{TaskID: u})
	}
	d.Tasks = append(d.Tasks, core.Task{TaskID: "down", DependsOn: ups, TriggerRule: rule})
	return d
}

type want struct {
	Schedule, StartDeferred, Skip, UpstreamFailed, Remove, Expand, Retry []string
	NextRetryAt                                                          *time.Time
	RunState                                                             core.DagRunState
}

func summarize(p Plan) want {
	ids := func(tis []core.TaskInstance) []string {
		var out []string
		for _, t := range tis {
			out = append(out, t.ID)
		}
		return out
	}
	return want{p.Schedule, ids(p.StartDeferred), p.Skip, p.UpstreamFailed, p.Remove, ids(p.Expand), ids(p.Retry), p.NextRetryAt, p.RunState}
}

func TestDecideTriggerRules(t *testing.T) {
	t.Parallel()
	S, F, UF, K, R, N, RM := core.TISuccess, core.TIFailed, core.TIUpstreamFailed, core.TISkipped, core.TIRunning, core.TINone, core.TIRemoved
	type tc struct {
		rule core.TriggerRule
		ups  []core.TIState
		want string // "run", "skip", "upstream_failed", "wait"
	}
	cases := []tc{
		{"", []core.TIState{S, S}, "run"},
		{core.AllSuccess, []core.TIState{S, R}, "wait"},
		{core.AllSuccess, []core.TIState{F, R}, "upstream_failed"},
		{core.AllSuccess, []core.TIState{UF, S}, "upstream_failed"},
		{core.AllSuccess, []core.TIState{K, S}, "skip"},
		{core.AllSuccess, []core.TIState{RM, S}, "run"},
		{core.AllFailed, []core.TIState{F, UF}, "run"},
		{core.AllFailed, []core.TIState{F, R}, "wait"},
		{core.AllFailed, []core.TIState{F, S}, "skip"},
		{core.AllFailed, []core.TIState{K, F}, "skip"},
		{core.AllDone, []core.TIState{F, K, S}, "run"},
		{core.AllDone, []core.TIState{F, R}, "wait"},
		{core.OneSuccess, []core.TIState{S, R}, "run"},
		{core.OneSuccess, []core.TIState{F, R}, "wait"},
		{core.OneSuccess, []core.TIState{F, K}, "upstream_failed"},
		{core.OneSuccess, []core.TIState{K, K}, "skip"},
		{core.OneFailed, []core.TIState{F, R}, "run"},
		{core.OneFailed, []core.TIState{UF, R}, "run"},
		{core.OneFailed, []core.TIState{S, R}, "wait"},
		{core.OneFailed, []core.TIState{S, K}, "skip"},
		{core.NoneFailed, []core.TIState{S, K}, "run"},
		{core.NoneFailed, []core.TIState{S, R}, "wait"},
		{core.NoneFailed, []core.TIState{UF, R}, "upstream_failed"},
		{core.NoneFailedMinOneSuccess, []core.TIState{S, K}, "run"},
		{core.NoneFailedMinOneSuccess, []core.TIState{K, K}, "skip"},
		{core.NoneFailedMinOneSuccess, []core.TIState{F, S}, "upstream_failed"},
		{core.NoneFailedMinOneSuccess, []core.TIState{K, R}, "wait"},
		{core.NoneSkipped, []core.TIState{S, F}, "run"},
		{core.NoneSkipped, []core.TIState{K, R}, "skip"},
		{core.NoneSkipped, []core.TIState{S, R}, "wait"},
		{core.Always, []core.TIState{R, N}, "run"},
	}
	for _, c := range cases {
		name := string(c.rule)
		for _, s := range c.ups {
			name += "/" + s.String()
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var ups []string
			var tis []core.TaskInstance
			for i, s := range c.ups {
				id := string(rune('a' + i))
				ups = append(ups, id)
				tis = append(tis, ti(id, -1, s))
			}
			tis = append(tis, ti("down", -1, core.TINone))
			p := Decide(fanIn(c.rule, ups...), tis, nil, t0)
			got := "wait"
			switch {
			case contains(p.Schedule, "down"):
				got = "run"
			case contains(p.Skip, "down"):
				got = "skip"
			case contains(p.UpstreamFailed, "down"):
				got = "upstream_failed"
			}
			if got != c.want {
				t.Errorf("down: got %s, want %s (plan %+v)", got, c.want, summarize(p))
			}
		})
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestDecide(t *testing.T) {
	t.Parallel()
	chain := &core.DAG{DagID: "chain", Tasks: []core.Task{
		{TaskID: "c", DependsOn: []string{"b"}}, // out of order on purpose
		{TaskID: "a"},
		{TaskID: "b", DependsOn: []string{"a"}},
	}}
	cleanup := &core.DAG{DagID: "cleanup", Tasks: []core.Task{
		{TaskID: "a"},
		{TaskID: "b", DependsOn: []string{"a"}},
		{TaskID: "end", DependsOn: []string{"b"}, TriggerRule: core.AllDone},
	}}
	mapped := &core.DAG{DagID: "mapped", Tasks: []core.Task{
		{TaskID: "gen"},
		{TaskID: "m", DependsOn: []string{"gen"}, Expand: map[string]core.ExpandSource{"x": {XCom: &core.XComRef{TaskID: "gen"}}}},
		{TaskID: "after", DependsOn: []string{"m"}},
	}}
	sensors := &core.DAG{DagID: "sensors", Tasks: []core.Task{
		{TaskID: "a"},
		{TaskID: "wait", DependsOn: []string{"a"}, Operator: "sensor",
			StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta"}}},
		{TaskID: "free", StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "file"}}},
		{TaskID: "after", DependsOn: []string{"wait"}},
	}}
	later, earlier := t0.Add(time.Minute), t0.Add(30*time.Second)
	tests := []struct {
		name string
		spec *core.DAG
		tis  []core.TaskInstance
		want want
	}{
		{"fresh chain schedules the root only", chain,
			[]core.TaskInstance{ti("a", -1, ""), ti("b", -1, ""), ti("c", -1, "")},
			want{Schedule: []string{"a"}}},
		{"success moves the chain on", chain,
			[]core.TaskInstance{ti("a", -1, core.TISuccess), ti("b", -1, ""), ti("c", -1, "")},
			want{Schedule: []string{"b"}}},
		{"failure propagates down the chain in one pass and fails the run", chain,
			[]core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", -1, ""), ti("c", -1, "")},
			want{UpstreamFailed: []string{"b", "c"}, RunState: core.RunFailed}},
		{"skip propagates and the run succeeds", chain,
			[]core.TaskInstance{ti("a", -1, core.TISkipped), ti("b", -1, ""), ti("c", -1, "")},
			want{Skip: []string{"b", "c"}, RunState: core.RunSuccess}},
		{"all done: run goes on", chain,
			[]core.TaskInstance{ti("a", -1, core.TISuccess), ti("b", -1, core.TISuccess), ti("c", -1, core.TIRunning)},
			want{}},
		{"all success finishes the run", chain,
			[]core.TaskInstance{ti("a", -1, core.TISuccess), ti("b", -1, core.TISuccess), ti("c", -1, core.TISuccess)},
			want{RunState: core.RunSuccess}},
		{"an all_done leaf that runs after a failure", cleanup,
			[]core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", -1, ""), ti("end", -1, "")},
			want{Schedule: []string{"end"}, UpstreamFailed: []string{"b"}}},
		{"a leaf succeeding after an inner failure makes the run succeed", cleanup,
			[]core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", -1, core.TIUpstreamFailed), ti("end", -1, core.TISuccess)},
			want{RunState: core.RunSuccess}},
		{"a due retry is retried, a later one sets the next wake", fanIn("", "x", "y"),
			[]core.TaskInstance{retryAt("x", t0), retryAt("y", later), ti("down", -1, "")},
			want{Retry: []string{"x"}, NextRetryAt: &later}},
		{"the earliest pending retry wins", fanIn("", "x", "y"),
			[]core.TaskInstance{retryAt("x", later), retryAt("y", earlier), ti("down", -1, "")},
			want{NextRetryAt: &earlier}},
		{"a retry without a time is due", fanIn("", "x"),
			[]core.TaskInstance{ti("x", -1, core.TIUpForRetry), ti("down", -1, "")},
			want{Retry: []string{"x"}}},
		{"up_for_retry upstream keeps downstream waiting", fanIn(core.AllDone, "x"),
			[]core.TaskInstance{retryAt("x", later), ti("down", -1, "")},
			want{NextRetryAt: &later}},
		{"mapped placeholder waits for its upstream", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TIRunning), ti("m", -1, ""), ti("after", -1, "")},
			want{}},
		{"mapped placeholder is expanded, not scheduled", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TISuccess), ti("m", -1, ""), ti("after", -1, "")},
			want{Expand: []string{"m"}}},
		{"a failed upstream fails the placeholder's downstream too", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TIFailed), ti("m", -1, ""), ti("after", -1, "")},
			want{UpstreamFailed: []string{"m", "after"}, RunState: core.RunFailed}},
		{"downstream counts every map index", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TISuccess), ti("m", 0, core.TISuccess), ti("m", 1, core.TIRunning), ti("after", -1, "")},
			want{}},
		{"one failed map index fails the downstream", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TISuccess), ti("m", 0, core.TISuccess), ti("m", 1, core.TIFailed), ti("after", -1, "")},
			want{UpstreamFailed: []string{"after"}, RunState: core.RunFailed}},
		{"all map indexes done runs the downstream", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TISuccess), ti("m", 0, core.TISuccess), ti("m", 1, core.TISuccess), ti("after", -1, "")},
			want{Schedule: []string{"after"}}},
		{"a cleared map index is scheduled again", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TISuccess), ti("m", 0, ""), ti("m", 1, core.TISuccess), ti("after", -1, "")},
			want{Schedule: []string{"m[0]"}}},
		{"an empty expansion (skipped placeholder) skips the downstream", mapped,
			[]core.TaskInstance{ti("gen", -1, core.TISuccess), ti("m", -1, core.TISkipped), ti("after", -1, "")},
			want{Skip: []string{"after"}, RunState: core.RunSuccess}},
		{"an instance of a task no longer in the DAG is removed", chain,
			[]core.TaskInstance{ti("a", -1, core.TISuccess), ti("b", -1, core.TISuccess), ti("c", -1, core.TISuccess), ti("gone", -1, "")},
			want{Remove: []string{"gone"}, RunState: core.RunSuccess}},
		{"a task that starts from its trigger is deferred where it would be scheduled", sensors,
			[]core.TaskInstance{ti("a", -1, ""), ti("wait", -1, ""), ti("free", -1, ""), ti("after", -1, "")},
			want{Schedule: []string{"a"}, StartDeferred: []string{"free"}}},
		{"its upstream done, the sensor starts deferred; its downstream waits", sensors,
			[]core.TaskInstance{ti("a", -1, core.TISuccess), ti("wait", -1, ""), ti("free", -1, core.TIDeferred), ti("after", -1, "")},
			want{StartDeferred: []string{"wait"}}},
		{"a start-from-trigger task whose upstream failed is upstream_failed, not deferred", sensors,
			[]core.TaskInstance{ti("a", -1, core.TIFailed), ti("wait", -1, ""), ti("free", -1, core.TISuccess), ti("after", -1, "")},
			want{UpstreamFailed: []string{"wait", "after"}, RunState: core.RunFailed}},
		{"deferred is not finished", chain,
			[]core.TaskInstance{ti("a", -1, core.TISuccess), ti("b", -1, core.TIDeferred), ti("c", -1, "")},
			want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := summarize(Decide(tt.spec, tt.tis, nil, t0))
			sortWant(&got)
			w := tt.want
			sortWant(&w)
			if diff := cmp.Diff(w, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func sortWant(w *want) {
	for _, s := range [][]string{w.Schedule, w.StartDeferred, w.Skip, w.UpstreamFailed, w.Remove, w.Expand, w.Retry} {
		sort.Strings(s)
	}
}

func TestTopologicalOrder(t *testing.T) {
	t.Parallel()
	spec := &core.DAG{Tasks: []core.Task{
		{TaskID: "d", DependsOn: []string{"b", "c"}},
		{TaskID: "c", DependsOn: []string{"a"}},
		{TaskID: "b", DependsOn: []string{"a"}},
		{TaskID: "a"},
	}}
	var got []string
	for _, task := range compile(spec).order {
		got = append(got, task.TaskID)
	}
	if diff := cmp.Diff([]string{"a", "c", "b", "d"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// A removed task is out of the run's graph: a task whose downstream tasks
// were all removed decides the run as a leaf does. A `weir tasks test`
// run removes every task but the tested one, and its failure used to end
// the run successful (its removed downstream leaves counted as success).
func TestRunStateWithRemovedDownstreams(t *testing.T) {
	g := compile(&core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "a"}, {TaskID: "b", DependsOn: []string{"a"}},
		{TaskID: "c", DependsOn: []string{"b"}}}})
	for _, tc := range []struct {
		name string
		tis  []core.TaskInstance
		want core.DagRunState
	}{
		{"the tested task failed, the rest removed", []core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", -1, core.TIRemoved),
			ti("c", -1, core.TIRemoved)}, core.RunFailed},
		{"the tested task succeeded, the rest removed", []core.TaskInstance{ti("a", -1, core.TISuccess), ti("b", -1, core.TIRemoved),
			ti("c", -1, core.TIRemoved)}, core.RunSuccess},
		{"a middle task tested and failed", []core.TaskInstance{ti("a", -1, core.TIRemoved), ti("b", -1, core.TIFailed),
			ti("c", -1, core.TIRemoved)}, core.RunFailed},
		{"no task removed: the leaf decides", []core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", -1, core.TIUpstreamFailed),
			ti("c", -1, core.TIUpstreamFailed)}, core.RunFailed},
		{"a failed task whose downstream ran anyway", []core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", -1, core.TISuccess),
			ti("c", -1, core.TISuccess)}, core.RunSuccess},
		{"a downstream with one instance left is not removed", []core.TaskInstance{ti("a", -1, core.TIFailed), ti("b", 0, core.TIRemoved),
			ti("b", 1, core.TISuccess), ti("c", -1, core.TISuccess)}, core.RunSuccess},
	} {
		state := make([]core.TIState, len(tc.tis))
		for i := range tc.tis {
			state[i] = tc.tis[i].State
		}
		if got := g.runState(tc.tis, state); got != tc.want {
			t.Errorf("%s: run %s, want %s", tc.name, got, tc.want)
		}
	}
}
