package schedule

import (
	"fmt"
	"time"
)

// Between returns, oldest first, the data intervals of tt whose logical
// date (Start) lies within [from, to] and within the DAG's start and end
// dates (nil = unbounded), and which are complete at now (End <= now): the
// runs a backfill over from..to makes. It fails when there would be more
// than limit of them, or when tt has no schedule.
func Between(tt Timetable, from, to time.Time, start, end *time.Time, now time.Time, limit int) ([]Interval, error) {
	lo, hi := from.UTC(), to.UTC()
	if start != nil && start.After(lo) {
		lo = start.UTC()
	}
	if end != nil && end.Before(hi) {
		hi = end.UTC()
	}
	// Next bounds a run's fire time (its End) by the end it is given: with
	// CronTriggerTimetable's interval the fire time of a logical date at
	// hi is hi + interval, within the DAG's own end date.
	fireEnd := hi
	if ct, ok := tt.(CronTrigger); ok && ct.interval > 0 {
		fireEnd = to.UTC().Add(ct.interval)
		if end != nil && end.Before(fireEnd) {
			fireEnd = end.UTC()
		}
	}
	first, ok := firstFrom(tt, lo, start, &fireEnd, now)
	var out []Interval
	for iv := first; ok && !iv.Start.After(hi) && !iv.End.After(now); iv, ok = tt.Next(&iv, start, &fireEnd, true, now) {
		if iv.Start.Before(lo) {
			continue
		}
		if len(out) == limit {
			return nil, fmt.Errorf("%s to %s holds more than %d runs of schedule %s; backfill a shorter range",
				from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), limit, tt.Summary())
		}
		out = append(out, iv)
		if _, once := tt.(Once); once { // nothing follows
			break
		}
	}
	return out, nil
}

// firstFrom returns the first interval starting at or after lo, on tt's
// own grid (a duration schedule is laid out from the DAG's start date).
func firstFrom(tt Timetable, lo time.Time, start, hi *time.Time, now time.Time) (Interval, bool) {
	switch t := tt.(type) {
	case None:
		return Interval{}, false
	case Once:
		return t.Next(nil, start, hi, true, now)
	case Delta:
		anchor := time.Unix(0, 0).UTC()
		if start != nil {
			anchor = start.UTC()
		}
		s := t.align(anchor, lo)
		if s.Before(lo) {
			s = s.Add(t.Every)
		}
		return Interval{Start: s, End: s.Add(t.Every)}, true
	}
	return tt.Next(nil, &lo, hi, true, now)
}
