package runs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

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

func TestOutcome(t *testing.T) {
	t.Parallel()
	task := &core.Task{RetryDelay: core.Duration(time.Minute)}
	tests := []struct {
		name      string
		task      *core.Task
		try, max  int
		reported  core.TIState
		how       runs.Failure
		want      core.TIState
		wantRetry time.Duration // -1 = no next_retry_at
		wantErr   bool
	}{
		{"success stands", task, 1, 3, core.TISuccess, runs.FailedItself, core.TISuccess, -1, false},
		{"skipped stands", task, 3, 3, core.TISkipped, runs.FailedItself, core.TISkipped, -1, false},
		{"failed with tries left retries after the delay", task, 1, 3, core.TIFailed, runs.FailedItself, core.TIUpForRetry, time.Minute, false},
		{"up_for_retry is a failure", task, 2, 3, core.TIUpForRetry, runs.FailedItself, core.TIUpForRetry, time.Minute, false},
		{"last try fails", task, 3, 3, core.TIFailed, runs.FailedItself, core.TIFailed, -1, false},
		{"past max_tries fails", task, 4, 3, core.TIUpForRetry, runs.FailedItself, core.TIFailed, -1, false},
		{"task gone retries at once", nil, 1, 2, core.TIFailed, runs.FailedItself, core.TIUpForRetry, 0, false},
		{"running is not an end", task, 1, 3, core.TIRunning, runs.FailedItself, "", -1, true},
		{"no retry fails with tries left", task, 1, 3, core.TIFailed, runs.FailedForGood, core.TIFailed, -1, false},
		{"no retry with up_for_retry fails too", task, 1, 3, core.TIUpForRetry, runs.FailedForGood, core.TIFailed, -1, false},
		{"no retry goes with failed only", task, 1, 3, core.TISuccess, runs.FailedForGood, "", -1, true},
		{"interrupted retries at once, the last try too", task, 3, 3, core.TIFailed, runs.Interrupted, core.TIUpForRetry, 0, false},
		{"interrupted goes with failed only", task, 1, 3, core.TISkipped, runs.Interrupted, "", -1, true},
		{"interrupted past the refunds is a failure", task, 3, 3, core.TIFailed, runs.Interrupted, core.TIFailed, -1, false},
		{"interrupted past the refunds retries as a failure", task, 1, 3, core.TIFailed, runs.Interrupted, core.TIUpForRetry, time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ti := &core.TaskInstance{TryNumber: tt.try, MaxTries: tt.max}
			if strings.Contains(tt.name, "past the refunds") {
				ti.Interruptions = runs.MaxRefunds
			}
			got, next, err := runs.Outcome(tt.task, ti, tt.reported, tt.how, t0)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, core.ErrInvalid)) {
				t.Fatalf("err = %v, want error %t (ErrInvalid)", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("state = %q, want %q", got, tt.want)
			}
			switch {
			case tt.wantRetry < 0 && next != nil:
				t.Errorf("next_retry_at = %v, want none", next)
			case tt.wantRetry >= 0 && (next == nil || next.Sub(t0) != tt.wantRetry):
				t.Errorf("next_retry_at = %v, want now+%s", next, tt.wantRetry)
			}
		})
	}
}

func TestClearable(t *testing.T) {
	t.Parallel()
	tis := []core.TaskInstance{{TaskID: "a", State: core.TISuccess}, {TaskID: "b", State: core.TIFailed},
		{TaskID: "c", State: core.TIUpstreamFailed}, {TaskID: "d", State: core.TINone}, {TaskID: "e", State: core.TIRunning}}
	ids := func(tis []core.TaskInstance) string {
		var s []string
		for _, ti := range tis {
			s = append(s, ti.TaskID)
		}
		return strings.Join(s, ",")
	}
	if got := ids(runs.Clearable(tis, true)); got != "b,c" {
		t.Errorf("only failed = %s, want b,c", got)
	}
	if got := ids(runs.Clearable(tis, false)); got != "a,b,c,e" {
		t.Errorf("all = %s, want a,b,c,e (never d, which is in state none)", got)
	}
}

func TestClearExtraTries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		try, maxTries int
		task          *core.Task
		want          int
	}{
		{"exhausted try gets its retries back", 2, 2, &core.Task{Retries: 1}, 2},
		{"first try of a task with no retries", 1, 1, &core.Task{}, 1},
		{"task gone keeps its recorded retries", 3, 3, nil, 3},
		{"retries lowered since: never negative", 1, 5, &core.Task{}, 0},
	}
	for _, tt := range tests {
		ti := &core.TaskInstance{TryNumber: tt.try, MaxTries: tt.maxTries}
		if got := runs.ClearExtraTries(ti, tt.task); got != tt.want {
			t.Errorf("%s: extra = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// A waiting sensor's timeout ends it (AirflowSensorTimeout); a producer
// sensor's or a streaming operator's is retried, to resume its stream.
func TestTimeoutEndsSensor(t *testing.T) {
	t.Parallel()
	spec := &core.DAG{Tasks: []core.Task{
		{TaskID: "wait", Operator: "sensor"},
		{TaskID: "fetch", Operator: "sensor"},
		{TaskID: "insert", Operator: "bash", Iterate: "fetch"},
		{TaskID: "handle", Operator: "sensor", Args: map[string]any{core.ArgHandleCommand: "cat"}},
		{TaskID: "defer_shell", Operator: "bash"},
	}}
	for task, want := range map[string]bool{"wait": true, "fetch": false, "handle": false, "defer_shell": false, "gone": false} {
		if got := runs.TimeoutEndsSensor(spec, spec.Task(task)); got != want {
			t.Errorf("%s: %t, want %t", task, got, want)
		}
	}
}
