package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// TestCronTriggerNext checks Airflow 3's CronTriggerTimetable rules: a run
// at each fire time, which is its logical date, with an empty interval.
func TestCronTriggerNext(t *testing.T) {
	t.Parallel()
	ams := mustLoad(t, "Europe/Amsterdam")
	jan1 := utc(2024, 1, 1, 0, 0)
	farFuture := utc(2030, 1, 1, 0, 0)
	at := func(t time.Time) *Interval { return iv(t, t) }
	tests := []nextCase{
		{name: "catchup: the first fire time at start", expr: "@daily", start: ptr(jan1), catchup: true, now: farFuture,
			want: at(jan1)},
		{name: "catchup: start between fire times rounds up", expr: "@daily", start: ptr(utc(2024, 1, 1, 10, 0)), catchup: true,
			now: farFuture, want: at(utc(2024, 1, 2, 0, 0))},
		{name: "catchup: the fire time after the last run's", expr: "@daily", start: ptr(jan1), catchup: true, now: farFuture,
			last: at(jan1), want: at(utc(2024, 1, 2, 0, 0))},
		{name: "catchup without a start date", expr: "@daily", catchup: true, now: farFuture},
		{name: "no catchup: the latest fire time at or before now", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 15, 0),
			want: at(utc(2024, 3, 10, 0, 0))},
		{name: "no catchup: now on a fire time runs it", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 0, 0),
			want: at(utc(2024, 3, 10, 0, 0))},
		{name: "no catchup: a moment after a fire time runs it", expr: "@daily", start: ptr(jan1),
			now: utc(2024, 3, 10, 0, 0).Add(3 * time.Millisecond), want: at(utc(2024, 3, 10, 0, 0))},
		{name: "no catchup: an old last run is skipped over", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 15, 0),
			last: at(jan1), want: at(utc(2024, 3, 10, 0, 0))},
		{name: "no catchup: after the latest, the next (in the future)", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 15, 0),
			last: at(utc(2024, 3, 10, 0, 0)), want: at(utc(2024, 3, 11, 0, 0))},
		{name: "no catchup: a start date in the future", expr: "@daily", start: ptr(utc(2024, 5, 1, 0, 0)), now: utc(2024, 3, 10, 15, 0),
			want: at(utc(2024, 5, 1, 0, 0))},
		{name: "the end date is the last fire time", expr: "@daily", start: ptr(jan1), end: ptr(utc(2024, 1, 2, 0, 0)), catchup: true,
			now: farFuture, last: at(jan1), want: at(utc(2024, 1, 2, 0, 0))},
		{name: "past the end date", expr: "@daily", start: ptr(jan1), end: ptr(utc(2024, 1, 2, 12, 0)), catchup: true,
			now: farFuture, last: at(utc(2024, 1, 2, 0, 0))},
		{name: "no catchup past the end date", expr: "@daily", start: ptr(jan1), end: ptr(utc(2024, 2, 1, 0, 0)), now: utc(2024, 3, 10, 15, 0)},
		{name: "weekdays over a weekend", expr: "0 9 * * 1-5", start: ptr(jan1), catchup: true, now: farFuture,
			last: at(utc(2024, 1, 5, 9, 0)), want: at(utc(2024, 1, 8, 9, 0))},
		{name: "fixed hour in a timezone fires once when clocks go back", expr: "30 2 * * *", loc: ams, start: ptr(jan1), catchup: true,
			now: farFuture, last: at(utc(2024, 10, 27, 0, 30)), want: at(utc(2024, 10, 28, 1, 30))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkTriggerNext(t, tc, TriggerArgs{}) })
	}
}

// checkTriggerNext runs case tc on CronTriggerTimetable with args.
func checkTriggerNext(t *testing.T, tc nextCase, args TriggerArgs) {
	t.Helper()
	t.Parallel()
	tt, err := ParseTimetable(tc.expr, CronTriggerTimetable, args, tc.loc)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := tt.Next(tc.last, tc.start, tc.end, tc.catchup, tc.now)
	checkNext(t, got, ok, tc.want)
}

// TestCronTriggerArguments checks CronTriggerTimetable's interval (a run's
// data interval ends at its fire time; its logical date is the start) and
// run_immediately (which fire time a DAG's first run without catchup has).
func TestCronTriggerArguments(t *testing.T) {
	t.Parallel()
	jan1 := utc(2024, 1, 1, 0, 0)
	day := 24 * time.Hour
	now := utc(2024, 3, 10, 15, 0) // 15 h after the last @daily fire time
	never := &core.RunImmediately{Never: true}
	within := func(d time.Duration) *core.RunImmediately { return &core.RunImmediately{Within: core.Duration(d)} }
	tests := []struct {
		nextCase
		args TriggerArgs
	}{
		{nextCase{name: "an interval ends at the fire time", expr: "@daily", start: ptr(jan1), catchup: true, now: now,
			want: iv(jan1.Add(-day), jan1)}, TriggerArgs{Interval: day}},
		{nextCase{name: "the next run after the last fire time, not its logical date", expr: "@daily", start: ptr(jan1), catchup: true, now: now,
			last: iv(jan1.Add(-day), jan1), want: iv(jan1, jan1.Add(day))}, TriggerArgs{Interval: day}},
		{nextCase{name: "an interval longer than the schedule's step", expr: "@hourly", start: ptr(jan1), catchup: true, now: now,
			last: iv(jan1.Add(-3*time.Hour), jan1), want: iv(jan1.Add(-2*time.Hour), jan1.Add(time.Hour))}, TriggerArgs{Interval: 3 * time.Hour}},
		{nextCase{name: "run_immediately true: the past fire time at once", expr: "@daily", start: ptr(jan1), now: now,
			want: iv(utc(2024, 3, 9, 0, 0), utc(2024, 3, 10, 0, 0))}, TriggerArgs{Interval: day}},
		{nextCase{name: "run_immediately false: the next fire time", expr: "@daily", start: ptr(jan1), now: now,
			want: iv(utc(2024, 3, 11, 0, 0), utc(2024, 3, 11, 0, 0))}, TriggerArgs{RunImmediately: never}},
		{nextCase{name: "run_immediately false: now on a fire time runs it", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 0, 0),
			want: iv(utc(2024, 3, 10, 0, 0), utc(2024, 3, 10, 0, 0))}, TriggerArgs{RunImmediately: never}},
		{nextCase{name: "run_immediately false: a pass a moment after the fire time runs it", expr: "@daily", start: ptr(jan1),
			now: utc(2024, 3, 11, 0, 0).Add(3 * time.Millisecond), want: iv(utc(2024, 3, 11, 0, 0), utc(2024, 3, 11, 0, 0))}, TriggerArgs{RunImmediately: never}},
		{nextCase{name: "run_immediately false: a tenth of the step", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 2, 0),
			want: iv(utc(2024, 3, 10, 0, 0), utc(2024, 3, 10, 0, 0))}, TriggerArgs{RunImmediately: never}},
		{nextCase{name: "run_immediately within reach", expr: "@daily", start: ptr(jan1), now: now,
			want: iv(utc(2024, 3, 10, 0, 0), utc(2024, 3, 10, 0, 0))}, TriggerArgs{RunImmediately: within(16 * time.Hour)}},
		{nextCase{name: "run_immediately out of reach", expr: "@daily", start: ptr(jan1), now: now,
			want: iv(utc(2024, 3, 11, 0, 0), utc(2024, 3, 11, 0, 0))}, TriggerArgs{RunImmediately: within(14 * time.Hour)}},
		{nextCase{name: "run_immediately false: a start date in the future still first", expr: "@daily", start: ptr(utc(2024, 5, 1, 0, 0)),
			now: now, want: iv(utc(2024, 5, 1, 0, 0), utc(2024, 5, 1, 0, 0))}, TriggerArgs{RunImmediately: never}},
		{nextCase{name: "run_immediately is for the first run only", expr: "@daily", start: ptr(jan1), now: now,
			last: iv(jan1, jan1), want: iv(utc(2024, 3, 10, 0, 0), utc(2024, 3, 10, 0, 0))}, TriggerArgs{RunImmediately: never}},
		{nextCase{name: "run_immediately has no say with catchup", expr: "@daily", start: ptr(jan1), catchup: true, now: now,
			want: iv(jan1, jan1)}, TriggerArgs{RunImmediately: never}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkTriggerNext(t, tc.nextCase, tc.args) })
	}
}

// TestManualInterval checks Airflow's infer_manual_data_interval: the data
// interval of a manual run with a logical date.
func TestManualInterval(t *testing.T) {
	t.Parallel()
	at := utc(2024, 3, 25, 1, 0)
	tests := []struct {
		expr, timetable string
		args            TriggerArgs
		want            Interval
	}{
		{expr: "@daily", want: Interval{utc(2024, 3, 24, 0, 0), utc(2024, 3, 25, 0, 0)}},
		{expr: "0 1 * * *", want: Interval{utc(2024, 3, 24, 1, 0), utc(2024, 3, 25, 1, 0)}}, // at a fire time: the interval ending there
		{expr: "30m", want: Interval{at.Add(-30 * time.Minute), at}},
		{expr: "@daily", timetable: CronTriggerTimetable, want: Interval{at, at}},
		{expr: "@daily", timetable: CronTriggerTimetable, args: TriggerArgs{Interval: 6 * time.Hour}, want: Interval{at.Add(-6 * time.Hour), at}},
		{expr: "@once", want: Interval{at, at}},
		{expr: "", want: Interval{at, at}},
	}
	for _, tc := range tests {
		tt, err := ParseTimetable(tc.expr, tc.timetable, tc.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tt.Manual(at); !got.Start.Equal(tc.want.Start) || !got.End.Equal(tc.want.End) {
			t.Errorf("%q %s: Manual(%v) = %v–%v, want %v–%v", tc.expr, tc.timetable, at, got.Start, got.End, tc.want.Start, tc.want.End)
		}
	}
}

// TestTimetablesOfOneCron compares the two timetables of one cron
// schedule: the trigger's run at a fire time is the data interval's run
// that ends there, one interval later in logical date.
func TestTimetablesOfOneCron(t *testing.T) {
	t.Parallel()
	now := utc(2024, 3, 10, 15, 0)
	start := utc(2024, 1, 1, 0, 0)
	intervals, err := ParseTimetable("@daily", CronDataIntervalTimetable, TriggerArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	triggers, err := ParseTimetable("@daily", CronTriggerTimetable, TriggerArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := intervals.Next(nil, &start, nil, false, now)
	b, _ := triggers.Next(nil, &start, nil, false, now)
	if !a.End.Equal(b.Start) || !b.Start.Equal(b.End) {
		t.Fatalf("data interval %v–%v, trigger %v–%v: want the trigger at the interval's end", a.Start, a.End, b.Start, b.End)
	}
}

func TestParseTimetable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, timetable, errPart string
		args                     TriggerArgs
		trigger                  bool
	}{
		{expr: "@daily", timetable: "", trigger: false},
		{expr: "@daily", timetable: CronDataIntervalTimetable},
		{expr: "@daily", timetable: CronTriggerTimetable, trigger: true},
		{expr: "0 9 * * 1-5", timetable: CronTriggerTimetable, trigger: true},
		{expr: "30m", timetable: ""},
		{expr: "@once", timetable: ""},
		{expr: "30m", timetable: CronTriggerTimetable, errPart: `needs a cron schedule (a preset such as "@daily" or a 5-field cron expression), not "30m"`},
		{expr: "@once", timetable: CronDataIntervalTimetable, errPart: `not "@once"`},
		{expr: "", timetable: CronTriggerTimetable, errPart: "has no time schedule"},
		{expr: "@daily", timetable: "CronTrigger", errPart: `"CronTrigger" is not a timetable`},
		{expr: "61 * * * *", timetable: CronTriggerTimetable, errPart: "invalid cron expression"},
		{expr: "@daily", timetable: CronDataIntervalTimetable, args: TriggerArgs{Interval: time.Hour}, errPart: "arguments of CronTriggerTimetable"},
		{expr: "@daily", args: TriggerArgs{RunImmediately: &core.RunImmediately{}}, errPart: "arguments of CronTriggerTimetable"},
		{expr: "@daily", timetable: CronTriggerTimetable, args: TriggerArgs{Interval: -time.Hour}, errPart: "must not be negative"},
		{expr: "@daily", timetable: CronTriggerTimetable, args: TriggerArgs{Interval: time.Hour}, trigger: true},
	}
	for _, tc := range tests {
		t.Run(tc.expr+"/"+tc.timetable, func(t *testing.T) {
			t.Parallel()
			tt, err := ParseTimetable(tc.expr, tc.timetable, tc.args, nil)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Fatalf("error = %v, want containing %q", err, tc.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, got := tt.(CronTrigger); got != tc.trigger {
				t.Errorf("%T: trigger timetable = %v, want %v", tt, got, tc.trigger)
			}
			if tc.trigger && tt.Summary() != tc.expr {
				t.Errorf("Summary = %q, want %q", tt.Summary(), tc.expr)
			}
		})
	}
}
