package runs_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

// followSpec: a → b; a, c → join (all_success); a, c → any (one_failed);
// a → fan (mapped); a → deferred (starts from a trigger); m (mapped) → after_m;
// a is the producer of stream consumer iter.
var followSpec = core.DAG{DagID: "f", Tasks: []core.Task{
	{TaskID: "a"},
	{TaskID: "b", DependsOn: []string{"a"}},
	{TaskID: "c"},
	{TaskID: "join", DependsOn: []string{"a", "c"}},
	{TaskID: "any", DependsOn: []string{"a", "c"}, TriggerRule: core.OneFailed},
	{TaskID: "fan", DependsOn: []string{"a"}, Expand: map[string]core.ExpandSource{"x": {Values: []any{1, 2}}}},
	{TaskID: "deferred", DependsOn: []string{"a"}, StartTrigger: &core.Deferral{}},
	{TaskID: "m", Expand: map[string]core.ExpandSource{"x": {Values: []any{1, 2}}}},
	{TaskID: "after_m", DependsOn: []string{"m"}},
	{TaskID: "p"},
	{TaskID: "iter", Iterate: "p"},
	{TaskID: "p_next", DependsOn: []string{"p"}},
}}

func TestFollowOnReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		done          core.TaskInstance
		down, counted []string
	}{
		// a's own success is known: only the other upstream, c, is counted.
		{core.TaskInstance{TaskID: "a", MapIndex: core.NoMapIndex}, []string{"b", "join", "any", "fan", "deferred"}, []string{"c"}},
		// A map index of m: m's other indexes are counted too.
		{core.TaskInstance{TaskID: "m", MapIndex: 1}, []string{"after_m"}, []string{"m"}},
		{core.TaskInstance{TaskID: "b", MapIndex: core.NoMapIndex}, nil, nil},
	} {
		down, counted := runs.FollowOnReads(&followSpec, &tc.done)
		if diff := cmp.Diff(tc.down, down); diff != "" {
			t.Errorf("%s: downstream (-want +got):\n%s", tc.done.TaskID, diff)
		}
		if diff := cmp.Diff(tc.counted, counted); diff != "" {
			t.Errorf("%s: counted (-want +got):\n%s", tc.done.TaskID, diff)
		}
	}
	if !runs.HasDownstream(&followSpec, "a") || runs.HasDownstream(&followSpec, "b") || runs.HasDownstream(&followSpec, "iter") {
		t.Error("HasDownstream: want a only among a, b, iter")
	}
}

func TestDecideFollowOn(t *testing.T) {
	t.Parallel()
	ti := func(task string, state core.TIState) core.TaskInstance {
		return core.TaskInstance{ID: task, TaskID: task, MapIndex: core.NoMapIndex, State: state}
	}
	a := ti("a", core.TISuccess)
	m1 := core.TaskInstance{ID: "m1", TaskID: "m", MapIndex: 1, State: core.TISuccess}
	type counts = map[string]map[core.TIState]int
	for _, tc := range []struct {
		name   string
		done   core.TaskInstance
		downs  []core.TaskInstance
		counts counts
		want   runs.FollowOn
	}{
		{"the next task of a chain runs", a, []core.TaskInstance{ti("b", core.TINone)}, nil,
			runs.FollowOn{Schedule: []string{"b"}}},
		{"a join waits for its other upstream", a, []core.TaskInstance{ti("join", core.TINone)},
			counts{"c": {core.TIRunning: 1}}, runs.FollowOn{}},
		{"a join runs once every upstream succeeded", a, []core.TaskInstance{ti("join", core.TINone)},
			counts{"c": {core.TISuccess: 1}}, runs.FollowOn{Schedule: []string{"join"}}},
		{"a join whose other upstream failed is the scheduler's (upstream_failed)", a, []core.TaskInstance{ti("join", core.TINone)},
			counts{"c": {core.TIFailed: 1}}, runs.FollowOn{NeedsScheduler: true}},
		{"one_failed with every upstream successful is the scheduler's (skip)", a, []core.TaskInstance{ti("any", core.TINone)},
			counts{"c": {core.TISuccess: 1}}, runs.FollowOn{NeedsScheduler: true}},
		{"an already decided instance is left alone", a, []core.TaskInstance{ti("b", core.TIQueued), ti("join", core.TISkipped)},
			counts{"c": {core.TISuccess: 1}}, runs.FollowOn{}},
		{"a mapped task's expansion is the scheduler's", a, []core.TaskInstance{ti("fan", core.TINone)}, nil,
			runs.FollowOn{NeedsScheduler: true}},
		{"a start from a trigger is the scheduler's", a, []core.TaskInstance{ti("deferred", core.TINone)}, nil,
			runs.FollowOn{NeedsScheduler: true}},
		{"after a map index, the others still run", m1, []core.TaskInstance{ti("after_m", core.TINone)},
			counts{"m": {core.TISuccess: 1, core.TIRunning: 1}}, runs.FollowOn{}},
		{"after the last map index, the downstream runs", m1, []core.TaskInstance{ti("after_m", core.TINone)},
			counts{"m": {core.TISuccess: 2}}, runs.FollowOn{Schedule: []string{"after_m"}}},
		{"a stream's producer ended: its close is the scheduler's", ti("p", core.TISuccess), []core.TaskInstance{ti("p_next", core.TINone)}, nil,
			runs.FollowOn{Schedule: []string{"p_next"}, NeedsScheduler: true}},
		{"an instance of a task gone from the DAG is ignored", a, []core.TaskInstance{ti("gone", core.TINone)}, nil, runs.FollowOn{}},
	} {
		got := runs.DecideFollowOn(&followSpec, &tc.done, tc.downs, tc.counts)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
