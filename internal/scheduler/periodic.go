package scheduler

import "time"

// periodic is a look a pass takes at most once per interval.
type periodic struct{ last time.Time }

// due reports whether the look p is due at now (once every interval) and,
// if so, records it as taken; either way it sets res's next wake-up to
// when the next look is due.
func (s *Scheduler) due(p *periodic, now time.Time, every time.Duration, res *passResult) bool {
	s.mu.Lock()
	due := p.last.IsZero() || !now.Before(p.last.Add(every))
	if due {
		p.last = now
	}
	next := p.last.Add(every)
	s.mu.Unlock()
	res.earliest(next)
	return due
}
