package scheduler_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

func mappedDAG(id string, expand map[string]core.ExpandSource) core.DAG {
	return core.DAG{DagID: id, Tasks: []core.Task{
		{TaskID: "gen"},
		{TaskID: "m", DependsOn: []string{"gen"}, Expand: expand},
		{TaskID: "after", DependsOn: []string{"m"}},
	}}
}

func TestMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		expand   map[string]core.ExpandSource
		gen      any // gen's return value
		wantArgs []string
		state    core.DagRunState
		states   map[string]string // checked when set
	}{
		{"literal list", map[string]core.ExpandSource{"x": {Values: []any{1, "two", 3}}}, nil,
			[]string{`{"x":1}`, `{"x":"two"}`, `{"x":3}`}, core.RunSuccess, nil},
		{"xcom list", map[string]core.ExpandSource{"x": {XCom: &core.XComRef{TaskID: "gen"}}}, []string{"a", "b"},
			[]string{`{"x":"a"}`, `{"x":"b"}`}, core.RunSuccess, nil},
		{"xcom map", map[string]core.ExpandSource{"kv": {XCom: &core.XComRef{TaskID: "gen"}}}, map[string]int{"k1": 1, "k2": 2},
			[]string{`{"kv":["k1",1]}`, `{"kv":["k2",2]}`}, core.RunSuccess, nil},
		{"cross product of a literal and an xcom", map[string]core.ExpandSource{
			"a": {Values: []any{1, 2}}, "b": {XCom: &core.XComRef{TaskID: "gen"}}}, []string{"x", "y", "z"},
			[]string{`{"a":1,"b":"x"}`, `{"a":1,"b":"y"}`, `{"a":1,"b":"z"}`, `{"a":2,"b":"x"}`, `{"a":2,"b":"y"}`, `{"a":2,"b":"z"}`},
			core.RunSuccess, nil},
		{"empty list skips the task and its downstream", map[string]core.ExpandSource{"x": {XCom: &core.XComRef{TaskID: "gen"}}}, []int{},
			nil, core.RunSuccess, map[string]string{"gen": "success", "m": "skipped", "after": "skipped"}},
		{"a non-list value fails the task", map[string]core.ExpandSource{"x": {XCom: &core.XComRef{TaskID: "gen"}}}, "oops",
			nil, core.RunFailed, map[string]string{"gen": "success", "m": "failed", "after": "upstream_failed"}},
		{"a missing xcom fails the task", map[string]core.ExpandSource{"x": {XCom: &core.XComRef{TaskID: "gen"}}}, nil,
			nil, core.RunFailed, map[string]string{"gen": "success", "m": "failed", "after": "upstream_failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, mappedDAG("map", tt.expand))
			run := h.trigger("map")
			out := func(ti core.TaskInstance) (core.TIState, any) {
				if ti.TaskID == "gen" {
					return core.TISuccess, tt.gen
				}
				return core.TISuccess, nil
			}
			rounds, state := h.drive(run, out)
			if state != tt.state {
				t.Fatalf("run = %s, want %s (instances %v)", state, tt.state, h.states(run))
			}
			var args []string
			for _, ti := range h.tis(run) {
				if ti.TaskID == "m" && ti.MapIndex >= 0 {
					args = append(args, compact(t, ti.MapArgs))
				}
			}
			if diff := cmp.Diff(tt.wantArgs, args); diff != "" {
				t.Errorf("map args by map_index (-want +got):\n%s", diff)
			}
			if tt.states != nil {
				if diff := cmp.Diff(tt.states, h.states(run)); diff != "" {
					t.Errorf("states (-want +got):\n%s", diff)
				}
			}
			if len(tt.wantArgs) > 0 {
				// gen, then every map index together, then after.
				if len(rounds) != 3 || len(rounds[1]) != len(tt.wantArgs) || !cmp.Equal(rounds[2], []string{"after"}) {
					t.Errorf("rounds = %v, want gen, all of m, after", rounds)
				}
			}
		})
	}
}

func TestMappingOverMappedUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, core.DAG{DagID: "mm", Tasks: []core.Task{
		{TaskID: "double", Expand: map[string]core.ExpandSource{"n": {Values: []any{1, 2}}}},
		{TaskID: "show", DependsOn: []string{"double"}, Expand: map[string]core.ExpandSource{"v": {XCom: &core.XComRef{TaskID: "double"}}}},
	}})
	run := h.trigger("mm")
	out := func(ti core.TaskInstance) (core.TIState, any) {
		if ti.TaskID == "double" {
			var a struct{ N int }
			_ = json.Unmarshal(ti.MapArgs, &a)
			return core.TISuccess, a.N * 10
		}
		return core.TISuccess, nil
	}
	if _, state := h.drive(run, out); state != core.RunSuccess {
		t.Fatalf("run = %s, want success", state)
	}
	var args []string
	for _, ti := range h.tis(run) {
		if ti.TaskID == "show" {
			args = append(args, compact(t, ti.MapArgs))
		}
	}
	if diff := cmp.Diff([]string{`{"v":10}`, `{"v":20}`}, args); diff != "" {
		t.Errorf("show's map args (-want +got):\n%s", diff)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("map args %q: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
