package schedule

import "time"

// The timetables a cron schedule can have (a DAG's timetable field, named
// after Airflow's classes).
const (
	// CronDataIntervalTimetable is Airflow 2's, and Weir's default: a run
	// covers the interval from one fire time to the next and starts once it
	// has ended.
	CronDataIntervalTimetable = "CronDataIntervalTimetable"
	// CronTriggerTimetable is Airflow 3's default: a run starts at each fire
	// time, which is its logical date; its data interval is empty.
	CronTriggerTimetable = "CronTriggerTimetable"
)

// CronTrigger is Airflow's CronTriggerTimetable (without its interval and
// run_immediately arguments): each fire time T of the cron expression is a
// run due at T, with logical date T and data interval [T, T]. Unlike Cron,
// a run does not wait for the next fire time, and without catchup the
// latest fire time at or before now runs.
type CronTrigger struct{ cron *Cron }

// Summary returns the preset or cron expression as written.
func (c CronTrigger) Summary() string { return c.cron.Summary() }

// Next implements Timetable with the rules of Airflow's
// CronTriggerTimetable.next_dagrun_info: with catchup, the first fire time
// at or after start and then each fire time after the last run's; without,
// the latest of the last fire time at or before now, the fire time after
// the last run's and the first at or after start.
func (c CronTrigger) Next(last *Interval, start, end *time.Time, catchup bool, now time.Time) (Interval, bool) {
	var t time.Time
	if !catchup {
		t = c.cron.alignPrev(now)
	}
	switch {
	case last != nil:
		t = later(t, c.cron.next(last.End))
	case start == nil && catchup:
		return Interval{}, false
	}
	if start != nil {
		t = later(t, c.cron.alignNext(*start))
	}
	if t.IsZero() || (end != nil && t.After(*end)) || (last != nil && !t.After(last.End)) {
		return Interval{}, false
	}
	t = t.UTC()
	return Interval{Start: t, End: t}, true
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
