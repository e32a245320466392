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

// UpSince reports since when, without a gap, some process of role has
// been alive up to now, judged from the job rows: a row covers the time
// from its process's start to its last heartbeat plus staleAfter. ok is
// false when no row of role is alive now (none covers now).
//
// The scheduler asks it about api-servers before failing tries over for
// missed heartbeats (docs/state-machines.md#dead-workers): a worker's
// heartbeat can only have arrived while an api-server was up.
func UpSince(jobs []core.Job, role string, now time.Time, staleAfter time.Duration) (since time.Time, ok bool) {
	type span struct{ from, to time.Time }
	var spans []span
	for _, j := range jobs {
		if j.Role != role {
			continue
		}
		from := j.StartedAt
		if from.IsZero() || from.After(j.Heartbeat) {
			from = j.Heartbeat
		}
		spans = append(spans, span{from, j.Heartbeat.Add(staleAfter)})
	}
	// Walk back from now: the latest-starting span covering the current
	// start of coverage extends it, until a gap.
	slices.SortFunc(spans, func(a, b span) int { return b.to.Compare(a.to) })
	since = now
	for _, s := range spans {
		if s.to.Before(since) {
			break // a gap: nothing covered the moment just before since
		}
		if s.from.Before(since) {
			since = s.from
		}
		ok = true
	}
	if !ok {
		return time.Time{}, false
	}
	return since, true
}
