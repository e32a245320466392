package job

import (
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// StaleAfter is how old a job row's heartbeat may be while its process
// still counts as alive: two heartbeat intervals (one write may be late).
func StaleAfter(interval time.Duration) time.Duration {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return 2 * interval
}

// Uptime is an unbroken stretch during which some process of a role was
// seen alive.
type Uptime struct {
	// Since is the earliest start of a process of the stretch.
	Since time.Time
	// Until is the latest heartbeat written in it: what was seen, not
	// assumed (a process may have died since).
	Until time.Time
}

// MinAliveWindow is the least time since its last heartbeat within which
// UpNow still counts a row as beating. Sub-second intervals (a worker
// heartbeat of 1 s makes api-servers beat every 500 ms) would otherwise
// read one write delayed on a loaded machine as an outage, and hold every
// failover back. A late or failed write that was real breaks the row's
// UpSince, and nothing is judged past the latest heartbeat, so the
// window's width does not make anyone look alive or dead wrongly.
const MinAliveWindow = 3 * time.Second

// UpNow reports the stretch of the role's uptime that reaches now, from
// the job rows: a row spans its process's unbroken run of heartbeats
// (UpSince, or its start) to its last heartbeat;
// spans less than one heartbeat interval apart chain (a gap that short is
// unobservable); and the stretch reaches now when one of its rows beat
// within StaleAfter of its interval (at least MinAliveWindow). A row's interval is its own
// (core.Job.Interval) or, when it has none, interval. ok is false when no
// row beat recently (every process of role is dead or stopped, or there
// is none).
//
// The scheduler asks it about api-servers before failing tries over for
// missed heartbeats (docs/state-machines.md#dead-workers): a worker's
// heartbeat can only arrive while an api-server is up.
func UpNow(jobs []core.Job, role string, now time.Time, interval time.Duration) (up Uptime, ok bool) {
	type span struct {
		Uptime
		every time.Duration
	}
	var spans []span
	for _, j := range jobs {
		if j.Role != role {
			continue
		}
		from := j.StartedAt
		if j.UpSince.After(from) {
			from = j.UpSince // its writes broke off since it started
		}
		if from.IsZero() || from.After(j.Heartbeat) {
			from = j.Heartbeat
		}
		every := j.Interval
		if every <= 0 {
			every = interval
		}
		if every <= 0 {
			every = DefaultInterval
		}
		ok = ok || !j.Heartbeat.Before(now.Add(-max(StaleAfter(every), MinAliveWindow)))
		spans = append(spans, span{Uptime{Since: from, Until: j.Heartbeat}, every})
	}
	if !ok {
		return Uptime{}, false
	}
	// Walk back from the latest heartbeat: each span ending within an
	// interval of the stretch's start extends it, until a gap.
	slices.SortFunc(spans, func(a, b span) int { return b.Until.Compare(a.Until) })
	up = spans[0].Uptime
	for _, s := range spans[1:] {
		if s.Until.Add(s.every).Before(up.Since) {
			break
		}
		up.Since = minTime(up.Since, s.Since)
	}
	return up, true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
