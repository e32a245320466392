package scheduler

import "time"

// periodic is a look a pass takes at most once per interval.
type periodic struct{ last time.Time }

// due reports whether the look p is due at now (once every interval) and,
// if so, records it as taken; either way it sets res's next wake-up to
// when the next look is due.
func (s *Scheduler) due(p *periodic, now time.Time, every time.Duration, res *passResult) bool {
	due, next := s.take(p, now, every)
	res.earliest(next)
	return due
}

// take records the look p as taken at now when it is due (once every
// interval), and returns whether it was and when the next one is due.
// A log line rate-limited this way needs no wake-up for its next turn.
func (s *Scheduler) take(p *periodic, now time.Time, every time.Duration) (due bool, next time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	due = p.last.IsZero() || !now.Before(p.last.Add(every))
	if due {
		p.last = now
	}
	return due, p.last.Add(every)
}
