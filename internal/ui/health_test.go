package ui

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

// The health summary lists the usual roles first (the scheduler unhealthy
// without a process, the others "none reported"), then any other role by
// name; a role is healthy when one of its processes beat recently.
func TestSummarizeHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	job := func(role string, ago time.Duration) core.Job { return core.Job{Role: role, Heartbeat: now.Add(-ago)} }
	tests := []struct {
		name string
		jobs []core.Job
		want []string
	}{
		{name: "nothing reported", want: []string{"scheduler: 0 of 0 unhealthy",
			"triggerer: 0 of 0 none reported", "worker: 0 of 0 none reported"}},
		{name: "one of two workers stale, an api-server", jobs: []core.Job{job("scheduler", 5*time.Second), job("worker", time.Second),
			job("worker", 10*time.Minute), job("triggerer", time.Minute), job("api-server", 2*time.Second)},
			want: []string{"scheduler: 1 of 1 healthy", "triggerer: 0 of 1 unhealthy",
				"worker: 1 of 2 healthy", "api-server: 1 of 1 healthy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, h := range summarizeHealth(tt.jobs, now, 30*time.Second) {
				got = append(got, h.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
	s := summarizeHealth([]core.Job{job("worker", 10*time.Minute), job("worker", 2*time.Minute)}, now, 30*time.Second)
	if w := s[2]; w.Latest != "2 min ago" || w.Icon != "✗" {
		t.Errorf("stale workers: %+v, want the newest heartbeat 2 min ago and ✗", w)
	}
}
