package ui

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
)

// The health summary lists the usual roles first (the scheduler unhealthy
// without a process, the others "none reported"), then any other role by
// name; a role is healthy when one of its processes beat recently.
func TestSummarizeHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	row := func(role string, ago time.Duration) core.Job { return core.Job{Role: role, Heartbeat: now.Add(-ago)} }
	tests := []struct {
		name string
		jobs []core.Job
		want []string
	}{
		{name: "nothing reported", want: []string{"scheduler: 0 of 0 unhealthy", "dag-processor: 0 of 0 none reported",
			"triggerer: 0 of 0 none reported", "api-server: 0 of 0 none reported", "worker: 0 of 0 none reported"}},
		{name: "one of two workers stale, an api-server", jobs: []core.Job{row("scheduler", 5*time.Second), row("worker", time.Second),
			row("worker", 10*time.Minute), row("triggerer", time.Minute), row("api-server", 2*time.Second)},
			want: []string{"scheduler: 1 of 1 healthy", "dag-processor: 0 of 0 none reported", "triggerer: 0 of 1 unhealthy",
				"api-server: 1 of 1 healthy", "worker: 1 of 2 healthy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			judged := job.Judge(tt.jobs, now, 30*time.Second)
			for _, h := range summarizeHealth(&judged, now) {
				got = append(got, h.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
	judged := job.Judge([]core.Job{row("worker", 10*time.Minute), row("worker", 2*time.Minute)}, now, 30*time.Second)
	s := summarizeHealth(&judged, now)
	if w := s[4]; w.Latest != "2 min ago" || w.Icon != "✗" {
		t.Errorf("stale workers: %+v, want the newest heartbeat 2 min ago and ✗", w)
	}
}
