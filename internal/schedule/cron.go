package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Cron is a timetable from a cron expression (or preset) evaluated in a
// timezone: each interval runs from one fire time to the next.
type Cron struct {
	expr string
	loc  *time.Location
	spec cron.Schedule
	// onceADay is set when the hour field is fixed (no "*"): the schedule
	// fires at wall-clock times, so a time repeated when clocks go back
	// fires once. Schedules with "*" in the hour field step in absolute
	// time, as in Airflow.
	onceADay bool
}

func newCron(summary, expr string, loc *time.Location) (*Cron, error) {
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %w; allowed are %s", expr, err, Allowed)
	}
	c := &Cron{expr: summary, loc: loc, spec: s, onceADay: !strings.Contains(strings.Fields(expr)[1], "*")}
	// A valid expression that never fires (such as "0 0 31 2 *") would make
	// every computation fail later; reject it now.
	if c.next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("cron expression %q never fires", expr)
	}
	return c, nil
}

// Summary returns the preset or cron expression as written.
func (c *Cron) Summary() string { return c.expr }

// Next implements Timetable with Airflow's CronDataIntervalTimetable rules.
func (c *Cron) Next(last *Interval, start, end *time.Time, catchup bool, now time.Time) (Interval, bool) {
	var earliest *time.Time
	switch {
	case !catchup:
		t := c.skipToLatest(start, now)
		earliest = &t
	case start != nil:
		t := c.alignNext(*start)
		earliest = &t
	}
	var s time.Time
	switch {
	case last == nil && earliest == nil:
		return Interval{}, false
	case last == nil:
		s = *earliest
	default:
		s = c.alignPrev(last.End)
		if earliest != nil && earliest.After(s) {
			s = *earliest
		}
	}
	if s.IsZero() || (end != nil && s.After(*end)) {
		return Interval{}, false
	}
	e := c.next(s)
	if e.IsZero() {
		return Interval{}, false
	}
	return Interval{Start: s.UTC(), End: e.UTC()}, true
}

// Manual is Airflow's infer_manual_data_interval: the latest complete
// interval at at (a manual run at 01:00 of a daily schedule covers the
// day before).
func (c *Cron) Manual(at time.Time) Interval {
	end := c.alignPrev(at)
	return Interval{Start: c.prev(end), End: end}
}

// skipToLatest returns the start of the latest complete interval at now, or
// the first interval at or after start when that is later.
func (c *Cron) skipToLatest(start *time.Time, now time.Time) time.Time {
	boundary := c.alignPrev(now) // latest fire time <= now: end of the latest complete interval
	latest := c.prev(boundary)
	if start == nil {
		return latest
	}
	if first := c.alignNext(*start); first.After(latest) {
		return first
	}
	return latest
}

// next returns the first fire time strictly after t (zero when none).
func (c *Cron) next(t time.Time) time.Time {
	n := c.spec.Next(t.In(c.loc))
	for c.onceADay && !n.IsZero() && repeatedWallClock(n) {
		n = c.spec.Next(n)
	}
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// repeatedWallClock reports whether t's wall-clock time already occurred
// shortly before t, i.e. t is the second occurrence after clocks went back.
func repeatedWallClock(t time.Time) bool {
	const layout = "2006-01-02 15:04:05"
	w := t.Format(layout)
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		if t.Add(-back).Format(layout) == w {
			return true
		}
	}
	return false
}

// alignNext returns t when it is a fire time, else the next fire time.
func (c *Cron) alignNext(t time.Time) time.Time {
	if c.next(t.Add(-time.Second)).Equal(t) {
		return t.UTC()
	}
	return c.next(t)
}

// alignPrev returns t when it is a fire time, else the previous fire time.
// Fire times are whole seconds: a t within a fire time's second (a
// scheduler pass a moment after it) aligns to it.
func (c *Cron) alignPrev(t time.Time) time.Time {
	t = t.Truncate(time.Second)
	if c.next(t.Add(-time.Second)).Equal(t) {
		return t.UTC()
	}
	return c.prev(t)
}

// maxLookback bounds the search for a previous fire time: robfig gives up
// after five years ahead, and no valid expression has a longer gap.
const maxLookback = 9 * 366 * 24 * time.Hour

// prev returns the latest fire time strictly before t (zero when none). The
// cron library has no Prev, so it searches with Next, which is monotonic:
// widen a window back from t until it holds a fire time, then bisect (at
// one-second resolution, as cron fire times are whole seconds) for the
// latest instant x with next(x) < t; next(x) is then the answer.
func (c *Cron) prev(t time.Time) time.Time {
	t = t.Truncate(time.Second)
	w := time.Minute
	lo := t.Add(-w)
	for n := c.next(lo); n.IsZero() || !n.Before(t); n = c.next(lo) {
		if w > maxLookback {
			return time.Time{}
		}
		w *= 2
		lo = t.Add(-w)
	}
	hi := t
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
		if n := c.next(mid); !n.IsZero() && n.Before(t) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return c.next(lo)
}
