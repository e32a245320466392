package job_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
)

func TestUpNow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	api := func(started, beat int) core.Job {
		return core.Job{Role: "api-server", StartedAt: at(started), Heartbeat: at(beat)}
	}
	const interval = 10 * time.Second // alive within 20 s
	tests := []struct {
		name         string
		jobs         []core.Job
		since, until int // seconds from now
		ok           bool
	}{
		{"no rows", nil, 0, 0, false},
		{"only other roles", []core.Job{{Role: "scheduler", StartedAt: at(-600), Heartbeat: at(0)}}, 0, 0, false},
		{"one up for ten minutes", []core.Job{api(-600, -5)}, -600, -5, true},
		{"beat just within staleness", []core.Job{api(-600, -20)}, -600, -20, true},
		{"every one stale: an outage now", []core.Job{api(-600, -21), api(-300, -40)}, 0, 0, false},
		{"back after a full outage", []core.Job{api(-600, -90), api(-600, -95), api(-30, -2), api(-28, -1)}, -30, -1, true},
		{"rolling restart: always one up", []core.Job{api(-600, -60), api(-70, -3), api(-600, -1)}, -600, -1, true},
		{"restarts overlapping in a chain", []core.Job{api(-600, -200), api(-210, -100), api(-110, -1)}, -600, -1, true},
		{"a gap between two lives", []core.Job{api(-600, -200), api(-150, -1)}, -150, -1, true},
		{"a gap shorter than an interval chains", []core.Job{api(-600, -160), api(-150, -1)}, -600, -1, true},
		{"a gap just longer than an interval", []core.Job{api(-600, -161), api(-150, -1)}, -150, -1, true},
		{"a row without start time counts from its beat", []core.Job{{Role: "api-server", Heartbeat: at(-1)}}, -1, -1, true},
		{"until is the latest beat, not now", []core.Job{api(-600, -15), api(-600, -12)}, -600, -12, true},
		{"a row's own interval judges it", []core.Job{{Role: "api-server", StartedAt: at(-600), Heartbeat: at(-5), Interval: 2 * time.Second}}, 0, 0, false},
		{"a short interval's late write is not an outage", []core.Job{{Role: "api-server", StartedAt: at(-600), Heartbeat: at(-2), Interval: 500 * time.Millisecond}}, -600, -2, true},
		{"a short interval is judged after the least window", []core.Job{{Role: "api-server", StartedAt: at(-600), Heartbeat: at(-4), Interval: 500 * time.Millisecond}}, 0, 0, false},
		{"an outage the row lived through starts its run again", []core.Job{{Role: "api-server", StartedAt: at(-600), UpSince: at(-8), Heartbeat: at(-1)}}, -8, -1, true},
		{"a run start before the process start is ignored", []core.Job{{Role: "api-server", StartedAt: at(-600), UpSince: at(-900), Heartbeat: at(-1)}}, -600, -1, true},
		{"a broken run breaks the chain of lives", []core.Job{api(-600, -200), {Role: "api-server", StartedAt: at(-210), UpSince: at(-50), Heartbeat: at(-1)}}, -50, -1, true},
		{"a row's own interval chains it", []core.Job{{Role: "api-server", StartedAt: at(-600), Heartbeat: at(-100), Interval: time.Minute}, api(-50, -1)}, -600, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up, ok := job.UpNow(tt.jobs, "api-server", now, interval)
			want := job.Uptime{Since: at(tt.since), Until: at(tt.until)}
			if ok != tt.ok || (ok && (!up.Since.Equal(want.Since) || !up.Until.Equal(want.Until))) {
				t.Errorf("UpNow = %v..%v, %v; want %v..%v, %v", up.Since.Sub(now), up.Until.Sub(now), ok,
					want.Since.Sub(now), want.Until.Sub(now), tt.ok)
			}
		})
	}
}
