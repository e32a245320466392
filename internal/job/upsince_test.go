package job_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
)

func TestUpSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	api := func(started, beat int) core.Job {
		return core.Job{Role: "api-server", StartedAt: at(started), Heartbeat: at(beat)}
	}
	const stale = 20 * time.Second
	tests := []struct {
		name  string
		jobs  []core.Job
		since int // seconds from now
		ok    bool
	}{
		{"no rows", nil, 0, false},
		{"only other roles", []core.Job{{Role: "scheduler", StartedAt: at(-600), Heartbeat: at(0)}}, 0, false},
		{"one up for ten minutes", []core.Job{api(-600, -5)}, -600, true},
		{"beat just within staleness", []core.Job{api(-600, -20)}, -600, true},
		{"every one stale: an outage now", []core.Job{api(-600, -21), api(-300, -40)}, 0, false},
		{"back after a full outage", []core.Job{api(-600, -90), api(-600, -95), api(-30, -2), api(-28, -1)}, -30, true},
		{"rolling restart: always one up", []core.Job{api(-600, -60), api(-70, -3), api(-600, -1)}, -600, true},
		{"restarts overlapping in a chain", []core.Job{api(-600, -200), api(-210, -100), api(-110, -1)}, -600, true},
		{"a gap between two lives", []core.Job{api(-600, -200), api(-150, -1)}, -150, true},
		{"a gap shorter than the staleness is no gap", []core.Job{api(-600, -160), api(-150, -1)}, -600, true},
		{"a row without start time counts from its beat", []core.Job{{Role: "api-server", Heartbeat: at(-1)}}, -1, true},
		{"a start after now (clock skew) counts from now", []core.Job{api(5, 5)}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			since, ok := job.UpSince(tt.jobs, "api-server", now, stale)
			if ok != tt.ok || (ok && !since.Equal(at(tt.since))) {
				t.Errorf("UpSince = %v, %v; want %v, %v", since.Sub(now), ok, time.Duration(tt.since)*time.Second, tt.ok)
			}
		})
	}
}
