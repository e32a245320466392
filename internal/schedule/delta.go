package schedule

import "time"

// Delta is a timetable of fixed-length intervals (a Go duration such as
// "30m") laid out from start_date: [start, start+d), [start+d, start+2d), …
// Without a start date the grid is anchored at the Unix epoch.
type Delta struct {
	Every time.Duration
}

// Summary returns the duration, such as "30m0s".
func (d Delta) Summary() string { return d.Every.String() }

// Next implements Timetable: the interval after last, or (without catchup)
// the latest complete interval at now, never before start nor starting
// after end.
func (d Delta) Next(last *Interval, start, end *time.Time, catchup bool, now time.Time) (Interval, bool) {
	anchor := time.Unix(0, 0).UTC()
	if start != nil {
		anchor = start.UTC()
	}
	var s time.Time
	switch {
	case last != nil:
		s = last.End
	case start == nil && catchup:
		return Interval{}, false
	default:
		s = anchor
	}
	if !catchup {
		latest := d.align(anchor, now).Add(-d.Every)
		if latest.After(s) {
			s = latest
		}
	}
	if end != nil && s.After(*end) {
		return Interval{}, false
	}
	return Interval{Start: s, End: s.Add(d.Every)}, true
}

// Manual is Airflow's infer_manual_data_interval: the interval that ends
// at at.
func (d Delta) Manual(at time.Time) Interval { return Interval{Start: at.Add(-d.Every), End: at} }

// align returns the latest grid point (anchor + k·Every) at or before t, or
// anchor when t is before it.
func (d Delta) align(anchor, t time.Time) time.Time {
	if !t.After(anchor) {
		return anchor
	}
	k := t.Sub(anchor) / d.Every
	return anchor.Add(k * d.Every)
}
