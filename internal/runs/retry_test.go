package runs_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

func TestNextRetryAt(t *testing.T) {
	t.Parallel()
	m := func(n int) core.Duration { return core.Duration(time.Duration(n) * time.Minute) }
	tests := []struct {
		name string
		task core.Task
		try  int
		want time.Duration
	}{
		{"fixed delay", core.Task{RetryDelay: m(5)}, 3, 5 * time.Minute},
		{"no delay", core.Task{}, 1, 0},
		{"fixed delay capped", core.Task{RetryDelay: m(5), MaxRetryDelay: m(2)}, 1, 2 * time.Minute},
		{"exponential first try", core.Task{RetryDelay: m(1), RetryExponentialBackoff: true}, 1, time.Minute},
		{"exponential third try", core.Task{RetryDelay: m(1), RetryExponentialBackoff: true}, 3, 4 * time.Minute},
		{"exponential capped", core.Task{RetryDelay: m(1), RetryExponentialBackoff: true, MaxRetryDelay: m(10)}, 8, 10 * time.Minute},
		{"exponential default cap", core.Task{RetryDelay: m(60), RetryExponentialBackoff: true}, 30, runs.DefaultMaxRetryDelay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := runs.NextRetryAt(&tt.task, tt.try, t0); got.Sub(t0) != tt.want {
				t.Errorf("delay = %s, want %s", got.Sub(t0), tt.want)
			}
		})
	}
}

func TestNewTaskInstances(t *testing.T) {
	t.Parallel()
	spec := &core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "a", Retries: 2},
		{TaskID: "b", DependsOn: []string{"a"}, Pool: "p", PoolSlots: 3, Queue: "q", PriorityWeight: 5},
		{TaskID: "c", DependsOn: []string{"a", "b"}, Expand: map[string]core.ExpandSource{"x": {Values: []any{1}}}},
	}}
	got := runs.NewTaskInstances(spec)
	if len(got) != 3 {
		t.Fatalf("got %d instances, want 3", len(got))
	}
	byTask := map[string]int{}
	ids := map[string]bool{}
	for i, ti := range got {
		byTask[ti.TaskID] = i
		ids[ti.ID] = true
		if ti.MapIndex != core.NoMapIndex || ti.State != core.TINone {
			t.Errorf("%s: map_index %d state %q, want -1 and none", ti.TaskID, ti.MapIndex, ti.State)
		}
	}
	if len(ids) != 3 {
		t.Errorf("ids are not unique: %v", ids)
	}
	a, b, c := got[byTask["a"]], got[byTask["b"]], got[byTask["c"]]
	if a.MaxTries != 3 || a.Pool != core.DefaultPool || a.Queue != core.DefaultQueue || a.PoolSlots != 1 {
		t.Errorf("a = %+v, want max_tries 3 and default pool, queue and one slot", a)
	}
	if b.Pool != "p" || b.PoolSlots != 3 || b.Queue != "q" {
		t.Errorf("b = %+v, want pool p, 3 slots, queue q", b)
	}
	// Downstream weight rule: c=1, b=5+1, a=1+5+1.
	if a.PriorityWeight != 7 || b.PriorityWeight != 6 || c.PriorityWeight != 1 {
		t.Errorf("weights a=%d b=%d c=%d, want 7 6 1", a.PriorityWeight, b.PriorityWeight, c.PriorityWeight)
	}
}
