package scheduler

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weirflow/weir/internal/core"
)

// TestDecideIterate: a task iterating over a stream gets an instance per
// item while its producer runs, within its own upstreams' trigger rule;
// the stream's close removes its placeholder, and its downstream task then
// runs by its trigger rule over every instance.
func TestDecideIterate(t *testing.T) {
	t.Parallel()
	spec := &core.DAG{DagID: "pages", Tasks: []core.Task{
		{TaskID: "setup"},
		{TaskID: "insert", DependsOn: []string{"setup"}, Iterate: "fetch"}, // before its producer on purpose
		{TaskID: "fetch", Operator: "sensor", StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "pages"}}},
		{TaskID: "after", DependsOn: []string{"insert"}},
	}}
	S, F, R, D, N := core.TISuccess, core.TIFailed, core.TIRunning, core.TIDeferred, core.TINone
	head := func(next int64, closed, failed bool) map[string]StreamHead {
		return map[string]StreamHead{"insert": {Next: next, Closed: closed, Failed: failed}}
	}
	capped := func(next, limit int64, closed bool) map[string]StreamHead {
		return map[string]StreamHead{"insert": {Next: next, Closed: closed, Max: limit}}
	}
	// run builds setup, fetch, the insert placeholder and after, then the
	// mapped insert instances in the given states.
	run := func(setup, fetch, placeholder core.TIState, mapped ...core.TIState) []core.TaskInstance {
		tis := []core.TaskInstance{ti("setup", -1, setup), ti("fetch", -1, fetch), ti("insert", -1, placeholder), ti("after", -1, N)}
		for i, s := range mapped {
			tis = append(tis, ti("insert", i, s))
		}
		return tis
	}
	type iterWant struct {
		Iterate                                 []string
		Schedule, StartDeferred, Skip, UpFailed []string
		RunState                                core.DagRunState
	}
	tests := []struct {
		name    string
		tis     []core.TaskInstance
		streams map[string]StreamHead
		want    iterWant
	}{
		{"the producer starts in the triggerer; the iterating task waits for its stream", run(N, N, N), nil,
			iterWant{Schedule: []string{"setup"}, StartDeferred: []string{"fetch"}}},
		{"no stream yet: nothing to expand", run(S, D, N), nil, iterWant{}},
		{"items so far become instances while the producer runs", run(S, D, N), head(3, false, false),
			iterWant{Iterate: []string{"insert 0..2"}}},
		{"only new items become instances", run(S, D, N, R, S, R), head(5, false, false),
			iterWant{Iterate: []string{"insert 3..4"}}},
		{"no new item: nothing", run(S, D, N, R, S, R), head(3, false, false), iterWant{}},
		{"its own upstream not done: it waits, whatever the stream holds", run(R, D, N), head(3, false, false), iterWant{}},
		{"its own upstream failed: upstream_failed, and so is its downstream", run(F, D, N), head(3, false, false),
			iterWant{UpFailed: []string{"insert", "after"}}},
		{"closed with every item expanded: the placeholder goes and the downstream runs", run(S, S, N, S, S, S), head(3, true, false),
			iterWant{Iterate: []string{"insert 3..2 close"}, Schedule: []string{"after"}}},
		{"closed, instances still running: the downstream waits", run(S, S, N, S, R, S), head(3, true, false),
			iterWant{Iterate: []string{"insert 3..2 close"}}},
		{"closed with new items: they are created, the downstream waits a pass", run(S, S, N, S, S), head(3, true, false),
			iterWant{Iterate: []string{"insert 2..2 close"}}},
		{"closed, one instance failed: the downstream's rule counts it", run(S, S, N, S, F, S), head(3, true, false),
			iterWant{Iterate: []string{"insert 3..2 close"}, UpFailed: []string{"after"}, RunState: core.RunFailed}},
		{"closed without an item: skipped, like an empty expansion", run(S, S, N), head(0, true, false),
			iterWant{Skip: []string{"insert", "after"}, RunState: core.RunSuccess}},
		{"the producer failed mid-stream: its items run, the placeholder is upstream_failed", run(S, F, N), head(2, true, true),
			iterWant{Iterate: []string{"insert 0..1"}, UpFailed: []string{"insert", "after"}}},
		{"the producer failed before its stream opened", run(S, F, N), nil,
			iterWant{UpFailed: []string{"insert", "after"}, RunState: core.RunFailed}},
		{"the producer succeeded without a stream: nothing to iterate", run(S, S, N), nil,
			iterWant{Skip: []string{"insert", "after"}, RunState: core.RunSuccess}},
		{"within the cap: items become instances as usual", run(S, D, N, S), capped(3, 3, false),
			iterWant{Iterate: []string{"insert 1..2"}}},
		{"closed at exactly the cap: the expansion completes", run(S, S, N, S, S, S), capped(3, 3, true),
			iterWant{Iterate: []string{"insert 3..2 close"}, Schedule: []string{"after"}}},
		{"past the cap: instances up to it, the task fails and its downstream is upstream_failed", run(S, D, N, S), capped(5, 3, false),
			iterWant{Iterate: []string{"insert 1..2 overflow"}, UpFailed: []string{"after"}}},
		{"past the cap with every instance made: it fails, nothing more is created", run(S, D, N, S, S, S), capped(9, 3, true),
			iterWant{Iterate: []string{"insert 3..2 overflow"}, UpFailed: []string{"after"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Decide(spec, tt.tis, tt.streams, t0)
			got := iterWant{Schedule: p.Schedule, Skip: p.Skip, UpFailed: p.UpstreamFailed, RunState: p.RunState}
			for _, x := range p.StartDeferred {
				got.StartDeferred = append(got.StartDeferred, x.ID)
			}
			for _, s := range p.Iterate {
				d := fmt.Sprintf("%s %d..%d", s.Placeholder.ID, s.From, s.Through)
				if s.Close {
					d += " close"
				}
				if s.Overflow {
					d += " overflow"
				}
				got.Iterate = append(got.Iterate, d)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
