package job_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
)

func TestGone(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	row := func(id string, beat int, every time.Duration) core.Job {
		return core.Job{ID: id, Role: "api-server", StartedAt: at(-600), Heartbeat: at(beat), Interval: every}
	}
	apiUp := job.Uptime{Since: at(-600), Until: at(-1)}
	const every = 5 * time.Second // the caller's interval for a process with no row
	tests := []struct {
		name  string
		jobs  []core.Job
		since int
		api   job.Uptime
		want  bool
	}{
		{"beating", []core.Job{row("t", -3, 5*time.Second)}, -300, apiUp, false},
		{"silent two of its intervals", []core.Job{row("t", -12, 5*time.Second)}, -300, apiUp, true},
		{"its own interval, not the caller's", []core.Job{row("t", -12, 10*time.Second)}, -300, apiUp, false},
		{"a second's interval is judged over three at least", []core.Job{row("t", -3, time.Second)}, -300, apiUp, false},
		{"silent past the least window", []core.Job{row("t", -5, time.Second)}, -300, apiUp, true},
		{"another process's row says nothing of it", []core.Job{row("other", -1, 5*time.Second)}, -300, apiUp, true},
		{"no row yet, made just now", nil, -3, apiUp, false},
		{"no row, made long ago (deleted or pruned)", nil, -300, apiUp, true},
		{"api-servers up only since after the cutoff", []core.Job{row("t", -300, 5*time.Second)}, -300,
			job.Uptime{Since: at(-5), Until: at(-1)}, false},
		{"api-servers up since exactly the cutoff", []core.Job{row("t", -300, 5*time.Second)}, -300,
			job.Uptime{Since: at(-11), Until: at(-1)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := job.Gone(tt.jobs, "t", at(tt.since), every, tt.api); got != tt.want {
				t.Errorf("Gone = %v, want %v", got, tt.want)
			}
		})
	}
}

// Every case Gone finds gone has the api-servers up for MinAliveWindow at
// least: MayBeGone says so before any run is read.
func TestMayBeGone(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		up   time.Duration
		want bool
	}{{0, false}, {job.MinAliveWindow - time.Millisecond, false}, {job.MinAliveWindow, true}, {time.Hour, true}} {
		api := job.Uptime{Since: until.Add(-tt.up), Until: until}
		if got := job.MayBeGone(api); got != tt.want {
			t.Errorf("up %s: MayBeGone = %v, want %v", tt.up, got, tt.want)
		}
		// A row silent since long before, and none at all: Gone agrees.
		if gone := job.Gone([]core.Job{{ID: "t", Heartbeat: until.Add(-time.Hour), Interval: time.Second}}, "t", until.Add(-time.Hour), time.Second, api); gone && !tt.want {
			t.Errorf("up %s: Gone finds a process gone where MayBeGone says none can be", tt.up)
		}
	}
}
