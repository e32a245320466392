// Package schedule turns a DAG's schedule expression into data intervals,
// with Airflow's semantics: a scheduled run covers the data interval
// [Start, End), its logical_date is Start, and it runs once End has passed.
//
// An expression is empty or "null" (no schedule: manual runs only), "@once",
// a preset (@hourly, @daily, @weekly, @monthly, @quarterly, @yearly,
// @annually), a five-field cron expression evaluated in the DAG's timezone,
// or a positive Go duration such as "30m" (fixed intervals from start_date).
package schedule

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/weirflow/weir/internal/core"
)

// Interval is a data interval. A run's logical_date is Start; the run is due
// once End has passed (for @once, Start == End == start_date).
type Interval struct{ Start, End time.Time }

// Timetable computes the data intervals of a DAG's scheduled runs.
type Timetable interface {
	// Next returns the next run's data interval after the last scheduled
	// run (nil = none yet), honouring start/end dates and catchup (without
	// catchup: only the latest complete interval at now). The interval may
	// end in the future: the caller runs it once End <= now. It returns
	// false when no further interval exists.
	Next(last *Interval, start, end *time.Time, catchup bool, now time.Time) (Interval, bool)
	// Manual is the data interval of a manual run with logical date at
	// (Airflow's infer_manual_data_interval).
	Manual(at time.Time) Interval
	// Summary describes the schedule for people (Airflow's
	// timetable_summary): the preset, cron expression or duration, or
	// "None" and "@once".
	Summary() string
}

// Presets maps each cron preset to its cron expression.
var Presets = map[string]string{
	"@hourly":    "0 * * * *",
	"@daily":     "0 0 * * *",
	"@midnight":  "0 0 * * *",
	"@weekly":    "0 0 * * 0",
	"@monthly":   "0 0 1 * *",
	"@quarterly": "0 0 1 */3 *",
	"@yearly":    "0 0 1 1 *",
	"@annually":  "0 0 1 1 *",
}

// Allowed describes the accepted forms, for error messages.
const Allowed = `null, "@once", a preset (` + "@hourly, @daily, @weekly, @monthly, @quarterly, @yearly" +
	`), a 5-field cron expression such as "30 2 * * 1-5", or a duration such as "30m"`

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Of returns the timetable of a DAG: its schedule, timetable (and that
// timetable's arguments) and timezone.
func Of(d *core.DAG) (Timetable, error) {
	return ParseTimetable(d.Schedule, d.Timetable, TriggerArgs{Interval: d.TimetableInterval.D(), RunImmediately: d.RunImmediately},
		d.Location())
}

// ParseTimetable parses a schedule expression into the named timetable:
// "" or CronDataIntervalTimetable for every kind of schedule,
// CronTriggerTimetable (with args) for a cron expression or preset only.
// loc is the timezone cron expressions are evaluated in (nil = UTC).
func ParseTimetable(expr, timetable string, args TriggerArgs, loc *time.Location) (Timetable, error) {
	if args.set() && timetable != CronTriggerTimetable {
		return nil, fmt.Errorf("interval and run_immediately are arguments of %s: name it as the timetable's type", CronTriggerTimetable)
	}
	if args.Interval < 0 {
		return nil, fmt.Errorf("interval %s must not be negative", args.Interval)
	}
	if r := args.RunImmediately; r != nil && r.Within < 0 {
		return nil, fmt.Errorf("run_immediately %s must be true, false or a positive duration", r.Within.D())
	}
	tt, err := Parse(expr, loc)
	if err != nil || timetable == "" {
		return tt, err
	}
	if timetable != CronDataIntervalTimetable && timetable != CronTriggerTimetable {
		return nil, fmt.Errorf("%q is not a timetable Weir has: allowed are %s and %s (for a cron schedule)",
			timetable, CronDataIntervalTimetable, CronTriggerTimetable)
	}
	c, isCron := tt.(*Cron)
	switch {
	case !isCron:
		return nil, timetableNeedsCron(timetable, expr)
	case timetable == CronTriggerTimetable:
		ct := CronTrigger{cron: c, interval: args.Interval}
		if args.RunImmediately != nil {
			ct.first = *args.RunImmediately
		}
		return ct, nil
	}
	return c, nil
}

func timetableNeedsCron(timetable, expr string) error {
	if strings.TrimSpace(expr) == "" {
		return fmt.Errorf("%s needs a cron schedule (a preset such as \"@daily\" or a 5-field cron expression); the DAG has no time schedule", timetable)
	}
	return fmt.Errorf("%s needs a cron schedule (a preset such as \"@daily\" or a 5-field cron expression), not %q", timetable, expr)
}

// TimetableName names d's timetable when its schedule is a cron expression
// (CronTriggerTimetable or CronDataIntervalTimetable), else "".
func TimetableName(d *core.DAG) string {
	tt, _ := Of(d) // nil on an error
	switch tt.(type) {
	case CronTrigger:
		return CronTriggerTimetable
	case *Cron:
		return CronDataIntervalTimetable
	}
	return ""
}

// IsCron reports whether expr is a cron expression or preset (a schedule
// a timetable applies to).
func IsCron(expr string) bool {
	tt, err := Parse(expr, nil)
	_, isCron := tt.(*Cron)
	return err == nil && isCron
}

// Parse parses a schedule expression into Weir's default timetable for it;
// loc is the timezone cron expressions are evaluated in (nil = UTC).
func Parse(expr string, loc *time.Location) (Timetable, error) {
	if loc == nil {
		loc = time.UTC
	}
	e := strings.TrimSpace(expr)
	switch {
	case e == "" || e == "null" || e == "None":
		return None{}, nil
	case e == "@once":
		return Once{}, nil
	case strings.HasPrefix(e, "@"):
		if c, ok := Presets[e]; ok {
			return newCron(e, c, loc)
		}
		return nil, fmt.Errorf("unknown preset %q: allowed presets are @once, %s", e, presetList())
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return nil, fmt.Errorf("cron expression %q: set the DAG's timezone field instead of a TZ= prefix", e)
	}
	if d, err := time.ParseDuration(e); err == nil {
		if d <= 0 {
			return nil, fmt.Errorf("duration schedule %q must be positive", e)
		}
		return Delta{Every: d}, nil
	}
	if len(strings.Fields(e)) != 5 {
		return nil, fmt.Errorf("invalid schedule %q: allowed are %s", e, Allowed)
	}
	return newCron(e, e, loc)
}

func presetList() string {
	names := make([]string, 0, len(Presets))
	for k := range Presets {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// None is the timetable of a DAG without a schedule: it never yields a run.
type None struct{}

// Next always reports false.
func (None) Next(*Interval, *time.Time, *time.Time, bool, time.Time) (Interval, bool) {
	return Interval{}, false
}

// Manual is the logical date alone.
func (None) Manual(at time.Time) Interval { return Interval{Start: at, End: at} }

// Summary returns "None", as Airflow does.
func (None) Summary() string { return "None" }

// Once is the "@once" timetable: a single run with interval
// [start_date, start_date], due at start_date.
type Once struct{}

// Next returns [start, start] for the first run and false afterwards, or
// when start is unset or after end.
func (Once) Next(last *Interval, start, end *time.Time, _ bool, _ time.Time) (Interval, bool) {
	if last != nil || start == nil || (end != nil && start.After(*end)) {
		return Interval{}, false
	}
	s := start.UTC()
	return Interval{Start: s, End: s}, true
}

// Manual is the logical date alone.
func (Once) Manual(at time.Time) Interval { return Interval{Start: at, End: at} }

// Summary returns "@once".
func (Once) Summary() string { return "@once" }
