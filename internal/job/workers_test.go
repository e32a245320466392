package job_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
)

func TestWorkerCutoffs(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	worker := func(name string, beat int, every time.Duration) core.Job {
		return core.Job{Role: "worker", WorkerID: name, StartedAt: at(-600), Heartbeat: at(beat), Interval: every}
	}
	apiUp := job.Uptime{Since: at(-600), Until: at(-1)}
	tests := []struct {
		name string
		jobs []core.Job
		api  job.Uptime
		want map[string]time.Time
	}{
		{"no workers", []core.Job{{Role: "api-server", Heartbeat: at(-1)}}, apiUp, map[string]time.Time{}},
		{"two intervals before the latest api-server beat", []core.Job{worker("w1", -3, 5*time.Second)}, apiUp,
			map[string]time.Time{"w1": at(-11)}},
		{"each worker its own interval", []core.Job{worker("w1", -3, 5*time.Second), worker("w2", -40, 30*time.Second)}, apiUp,
			map[string]time.Time{"w1": at(-11), "w2": at(-61)}},
		{"a dead worker's cutoff is the same", []core.Job{worker("w1", -300, 5*time.Second)}, apiUp,
			map[string]time.Time{"w1": at(-11)}},
		{"the latest row of a worker's lives gives the interval",
			[]core.Job{worker("w1", -300, time.Minute), worker("w1", -2, 5*time.Second)}, apiUp,
			map[string]time.Time{"w1": at(-11)}},
		{"rows without a name or an interval (older workers) are not judged",
			[]core.Job{worker("", -2, 5*time.Second), worker("w3", -2, 0)}, apiUp, map[string]time.Time{}},
		{"api-servers up only since after the cutoff: not judged yet",
			[]core.Job{worker("w1", -3, 5*time.Second), worker("w2", -3, 30*time.Second)},
			job.Uptime{Since: at(-20), Until: at(-1)}, map[string]time.Time{"w1": at(-11)}},
		{"api-servers up since exactly the cutoff", []core.Job{worker("w1", -3, 5*time.Second)},
			job.Uptime{Since: at(-11), Until: at(-1)}, map[string]time.Time{"w1": at(-11)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, job.WorkerCutoffs(tt.jobs, tt.api)); diff != "" {
				t.Errorf("WorkerCutoffs (-want +got):\n%s", diff)
			}
		})
	}
}

// A worker has missed a beat once half an interval more than one has
// passed since its last; one without an interval never has.
func TestSilent(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		interval, since time.Duration
		want            bool
	}{
		{5 * time.Second, 0, false},
		{5 * time.Second, 7 * time.Second, false},
		{5 * time.Second, 7*time.Second + 600*time.Millisecond, true},
		{time.Second, time.Minute, true},
		{0, time.Hour, false},
	} {
		j := &core.Job{Heartbeat: t0, Interval: tc.interval}
		if got := job.Silent(j, t0.Add(tc.since)); got != tc.want {
			t.Errorf("Silent(interval %s, %s after its beat) = %v, want %v", tc.interval, tc.since, got, tc.want)
		}
	}
}
