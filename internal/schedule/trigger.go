package schedule

import (
	"time"

	"github.com/weirflow/weir/internal/core"
)

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

// CronTrigger is Airflow's CronTriggerTimetable: each fire time T of the
// cron expression is a run due at T, with data interval [T - interval, T]
// and logical date T - interval (T itself with no interval). Unlike Cron,
// a run does not wait for the next fire time, and without catchup the
// latest fire time at or before now runs (but a DAG's first run, which
// RunImmediately decides).
type CronTrigger struct {
	cron     *Cron
	interval time.Duration
	first    core.RunImmediately
}

// TriggerArgs are CronTriggerTimetable's arguments beside its cron
// expression (core.DAG's TimetableInterval and RunImmediately).
type TriggerArgs struct {
	Interval       time.Duration
	RunImmediately *core.RunImmediately
}

func (a TriggerArgs) set() bool { return a.Interval != 0 || a.RunImmediately != nil }

// Summary returns the preset or cron expression as written.
func (c CronTrigger) Summary() string { return c.cron.Summary() }

// Next implements Timetable with the rules of Airflow's
// CronTriggerTimetable.next_dagrun_info: with catchup, the first fire time
// at or after start and then each fire time after the last run's; without,
// the latest of the last fire time at or before now (for the first run:
// the fire time RunImmediately chooses), the fire time after the last
// run's and the first at or after start. Unlike Airflow, RunImmediately
// applies whether or not start is set (in Airflow it is ignored when
// start_date is set, apache/airflow#64162).
func (c CronTrigger) Next(last *Interval, start, end *time.Time, catchup bool, now time.Time) (Interval, bool) {
	var t time.Time
	switch {
	case !catchup && last == nil:
		t = c.firstRun(now)
	case !catchup:
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
	return Interval{Start: t.Add(-c.interval), End: t}, true
}

// firstRun is the fire time a DAG's first run without catchup has at now:
// the latest past one, or the next, as RunImmediately says. false runs the
// past one when it is at most a tenth of the schedule's step old (and five
// minutes), as Airflow's False does: the scheduler asks at every pass until
// the first run exists, so a pass a moment after a fire time must run it.
func (c CronTrigger) firstRun(now time.Time) time.Time {
	past := c.cron.alignPrev(now)
	within := c.first.Within.D()
	if c.first.Never {
		within = max(c.cron.next(past).Sub(past)/10, 5*time.Minute)
	}
	if within > 0 && now.Sub(past) > within {
		return c.cron.alignNext(now)
	}
	return past
}

// Manual is Airflow's infer_manual_data_interval: the interval before at,
// [at - interval, at].
func (c CronTrigger) Manual(at time.Time) Interval {
	return Interval{Start: at.Add(-c.interval), End: at}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
