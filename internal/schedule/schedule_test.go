package schedule

import (
	"strings"
	"testing"
	"time"
)

func utc(y int, m time.Month, d, h, mi int) time.Time {
	return time.Date(y, m, d, h, mi, 0, 0, time.UTC)
}

func ptr(t time.Time) *time.Time { return &t }

func iv(s, e time.Time) *Interval { return &Interval{Start: s, End: e} }

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

func TestNext(t *testing.T) {
	t.Parallel()
	ams := mustLoad(t, "Europe/Amsterdam")
	ny := mustLoad(t, "America/New_York")
	jan1 := utc(2024, 1, 1, 0, 0)
	farFuture := utc(2030, 1, 1, 0, 0)
	tests := []nextCase{
		{name: "daily first run at start", expr: "@daily", start: ptr(jan1), catchup: true, now: farFuture,
			want: iv(jan1, utc(2024, 1, 2, 0, 0))},
		{name: "daily start not aligned rounds up", expr: "@daily", start: ptr(utc(2024, 1, 1, 10, 0)), catchup: true, now: farFuture,
			want: iv(utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0))},
		{name: "daily catchup continues after last", expr: "@daily", start: ptr(jan1), catchup: true, now: farFuture,
			last: iv(jan1, utc(2024, 1, 2, 0, 0)), want: iv(utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0))},
		{name: "daily no catchup skips to latest complete", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 15, 0),
			want: iv(utc(2024, 3, 9, 0, 0), utc(2024, 3, 10, 0, 0))},
		{name: "daily no catchup now on boundary", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 0, 0),
			want: iv(utc(2024, 3, 9, 0, 0), utc(2024, 3, 10, 0, 0))},
		{name: "daily no catchup skips old last", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 15, 0),
			last: iv(jan1, utc(2024, 1, 2, 0, 0)), want: iv(utc(2024, 3, 9, 0, 0), utc(2024, 3, 10, 0, 0))},
		{name: "daily no catchup after latest gives future interval", expr: "@daily", start: ptr(jan1), now: utc(2024, 3, 10, 15, 0),
			last: iv(utc(2024, 3, 9, 0, 0), utc(2024, 3, 10, 0, 0)), want: iv(utc(2024, 3, 10, 0, 0), utc(2024, 3, 11, 0, 0))},
		{name: "no catchup start in future", expr: "@daily", start: ptr(utc(2024, 5, 1, 0, 0)), now: utc(2024, 3, 10, 15, 0),
			want: iv(utc(2024, 5, 1, 0, 0), utc(2024, 5, 2, 0, 0))},
		{name: "no catchup without start date", expr: "@hourly", now: utc(2024, 3, 10, 15, 30),
			want: iv(utc(2024, 3, 10, 14, 0), utc(2024, 3, 10, 15, 0))},
		{name: "catchup without start date", expr: "@hourly", catchup: true, now: utc(2024, 3, 10, 15, 30)},
		{name: "end date stops runs", expr: "@daily", start: ptr(jan1), end: ptr(utc(2024, 1, 2, 12, 0)), catchup: true, now: farFuture,
			last: iv(utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0))},
		{name: "interval starting at end date runs", expr: "@daily", start: ptr(jan1), end: ptr(utc(2024, 1, 3, 0, 0)), catchup: true, now: farFuture,
			last: iv(utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0)), want: iv(utc(2024, 1, 3, 0, 0), utc(2024, 1, 4, 0, 0))},
		{name: "no catchup past end date", expr: "@daily", start: ptr(jan1), end: ptr(utc(2024, 2, 1, 0, 0)), now: utc(2024, 3, 10, 15, 0)},
		{name: "monthly from month end", expr: "@monthly", start: ptr(utc(2024, 1, 31, 0, 0)), catchup: true, now: farFuture,
			want: iv(utc(2024, 2, 1, 0, 0), utc(2024, 3, 1, 0, 0))},
		{name: "day 31 skips short months", expr: "0 0 31 * *", catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 1, 31, 0, 0), utc(2024, 3, 31, 0, 0)), want: iv(utc(2024, 3, 31, 0, 0), utc(2024, 5, 31, 0, 0))},
		{name: "leap day", expr: "0 0 29 2 *", start: ptr(jan1), catchup: true, now: farFuture,
			want: iv(utc(2024, 2, 29, 0, 0), utc(2028, 2, 29, 0, 0))},
		{name: "no catchup leap day needs long lookback", expr: "0 0 29 2 *", start: ptr(jan1), now: utc(2029, 6, 1, 0, 0),
			want: iv(utc(2024, 2, 29, 0, 0), utc(2028, 2, 29, 0, 0))},
		{name: "yearly", expr: "@yearly", start: ptr(utc(2023, 6, 1, 0, 0)), catchup: true, now: farFuture,
			want: iv(jan1, utc(2025, 1, 1, 0, 0))},
		{name: "weekly on sunday", expr: "@weekly", start: ptr(jan1), catchup: true, now: farFuture, // 2024-01-01 is a Monday
			want: iv(utc(2024, 1, 7, 0, 0), utc(2024, 1, 14, 0, 0))},
		{name: "dst spring forward day is 23h", expr: "@daily", loc: ams, catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 3, 29, 23, 0), utc(2024, 3, 30, 23, 0)), want: iv(utc(2024, 3, 30, 23, 0), utc(2024, 3, 31, 22, 0))},
		{name: "dst fall back day is 25h", expr: "@daily", loc: ams, catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 10, 25, 22, 0), utc(2024, 10, 26, 22, 0)), want: iv(utc(2024, 10, 26, 22, 0), utc(2024, 10, 27, 23, 0))},
		{name: "dst fall back fixed hour fires once", expr: "30 2 * * *", loc: ams, catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 10, 26, 0, 30), utc(2024, 10, 27, 0, 30)), want: iv(utc(2024, 10, 27, 0, 30), utc(2024, 10, 28, 1, 30))},
		{name: "dst fall back hourly keeps absolute hours", expr: "@hourly", loc: ams, catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 10, 27, 0, 0), utc(2024, 10, 27, 1, 0)), want: iv(utc(2024, 10, 27, 1, 0), utc(2024, 10, 27, 2, 0))},
		{name: "dst no catchup in timezone", expr: "@daily", loc: ams, start: ptr(jan1), now: utc(2024, 3, 31, 23, 0),
			want: iv(utc(2024, 3, 30, 23, 0), utc(2024, 3, 31, 22, 0))},
		{name: "weekdays over a weekend", expr: "0 9 * * 1-5", loc: ny, catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 1, 4, 14, 0), utc(2024, 1, 5, 14, 0)), want: iv(utc(2024, 1, 5, 14, 0), utc(2024, 1, 8, 14, 0))},
		{name: "last from an older schedule is realigned", expr: "@daily", catchup: true, now: farFuture, start: ptr(jan1),
			last: iv(utc(2024, 1, 1, 0, 0), utc(2024, 1, 1, 6, 0)), want: iv(utc(2024, 1, 1, 0, 0), utc(2024, 1, 2, 0, 0))},
		{name: "once first", expr: "@once", start: ptr(jan1), now: farFuture, want: iv(jan1, jan1)},
		{name: "once after a run", expr: "@once", start: ptr(jan1), now: farFuture, last: iv(jan1, jan1)},
		{name: "once without start", expr: "@once", now: farFuture},
		{name: "once start after end", expr: "@once", start: ptr(jan1), end: ptr(utc(2023, 1, 1, 0, 0)), now: farFuture},
		{name: "none", expr: "", start: ptr(jan1), catchup: true, now: farFuture},
		{name: "null", expr: "null", start: ptr(jan1), now: farFuture},
		{name: "delta first", expr: "30m", start: ptr(utc(2024, 1, 1, 10, 5)), catchup: true, now: farFuture,
			want: iv(utc(2024, 1, 1, 10, 5), utc(2024, 1, 1, 10, 35))},
		{name: "delta after last", expr: "30m", start: ptr(utc(2024, 1, 1, 10, 5)), catchup: true, now: farFuture,
			last: iv(utc(2024, 1, 1, 10, 5), utc(2024, 1, 1, 10, 35)), want: iv(utc(2024, 1, 1, 10, 35), utc(2024, 1, 1, 11, 5))},
		{name: "delta no catchup on the start grid", expr: "30m", start: ptr(utc(2024, 1, 1, 10, 5)), now: utc(2024, 1, 1, 12, 50),
			want: iv(utc(2024, 1, 1, 12, 5), utc(2024, 1, 1, 12, 35))},
		{name: "delta no catchup before start", expr: "1h", start: ptr(utc(2024, 1, 1, 10, 0)), now: utc(2024, 1, 1, 9, 0),
			want: iv(utc(2024, 1, 1, 10, 0), utc(2024, 1, 1, 11, 0))},
		{name: "delta end date", expr: "1h", start: ptr(jan1), end: ptr(utc(2024, 1, 1, 0, 30)), catchup: true, now: farFuture,
			last: iv(jan1, utc(2024, 1, 1, 1, 0))},
		{name: "delta catchup without start", expr: "1h", catchup: true, now: farFuture},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tt, err := Parse(tc.expr, tc.loc)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			got, ok := tt.Next(tc.last, tc.start, tc.end, tc.catchup, tc.now)
			checkNext(t, got, ok, tc.want)
		})
	}
}

// nextCase is one row of a table of Next: the schedule (in loc), Next's
// arguments, and the interval wanted (nil: none).
type nextCase struct {
	name       string
	expr       string
	loc        *time.Location
	last       *Interval
	start, end *time.Time
	catchup    bool
	now        time.Time
	want       *Interval
}

// checkNext compares what Next returned (got, ok) with want (nil = none),
// and checks that an interval is in UTC.
func checkNext(t *testing.T, got Interval, ok bool, want *Interval) {
	t.Helper()
	switch {
	case want == nil && ok:
		t.Fatalf("Next = %v–%v, want none", got.Start, got.End)
	case want != nil && !ok:
		t.Fatalf("Next = none, want %v–%v", want.Start, want.End)
	case want != nil && (!got.Start.Equal(want.Start) || !got.End.Equal(want.End)):
		t.Fatalf("Next = %v–%v, want %v–%v", got.Start, got.End, want.Start, want.End)
	}
	if ok && got.Start.Location() != time.UTC {
		t.Errorf("interval not in UTC: %v", got.Start.Location())
	}
}

// TestCatchupSequence walks a catchup schedule run by run and checks that
// consecutive intervals tile time without gaps or overlaps.
func TestCatchupSequence(t *testing.T) {
	t.Parallel()
	ams := mustLoad(t, "Europe/Amsterdam")
	tt, err := Parse("15 */6 * * *", ams)
	if err != nil {
		t.Fatal(err)
	}
	start := utc(2024, 3, 28, 0, 0)
	var last *Interval
	for i := 0; i < 40; i++ {
		got, ok := tt.Next(last, &start, nil, true, utc(2030, 1, 1, 0, 0))
		if !ok {
			t.Fatalf("run %d: no interval", i)
		}
		if last != nil && !got.Start.Equal(last.End) {
			t.Fatalf("run %d: starts %v, previous ended %v", i, got.Start, last.End)
		}
		if !got.End.After(got.Start) {
			t.Fatalf("run %d: empty interval %v", i, got)
		}
		if m := got.Start.In(ams).Minute(); m != 15 {
			t.Fatalf("run %d: starts at minute %d", i, m)
		}
		last = &got
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, summary, errPart string
	}{
		{expr: "", summary: "None"},
		{expr: "null", summary: "None"},
		{expr: "@once", summary: "@once"},
		{expr: "@daily", summary: "@daily"},
		{expr: " @hourly ", summary: "@hourly"},
		{expr: "@quarterly", summary: "@quarterly"},
		{expr: "*/5 * * * *", summary: "*/5 * * * *"},
		{expr: "0 9 * * MON-FRI", summary: "0 9 * * MON-FRI"},
		{expr: "30m", summary: "30m0s"},
		{expr: "1h30m", summary: "1h30m0s"},
		{expr: "@continuous", errPart: `unknown preset "@continuous"`},
		{expr: "@every 5m", errPart: "unknown preset"},
		{expr: "0s", errPart: "must be positive"},
		{expr: "-5m", errPart: "must be positive"},
		{expr: "* * * *", errPart: "5-field cron"},
		{expr: "0 0 * * * *", errPart: "5-field cron"},
		{expr: "61 * * * *", errPart: "invalid cron expression"},
		{expr: "0 0 31 2 *", errPart: "never fires"},
		{expr: "TZ=UTC 0 0 * * *", errPart: "timezone field"},
		{expr: "daily", errPart: "allowed are"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			tt, err := Parse(tc.expr, time.UTC)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Fatalf("Parse(%q) error = %v, want containing %q", tc.expr, err, tc.errPart)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			if got := tt.Summary(); got != tc.summary {
				t.Errorf("Summary = %q, want %q", got, tc.summary)
			}
		})
	}
}

func TestPresetsMatchCron(t *testing.T) {
	t.Parallel()
	start := utc(2024, 1, 1, 0, 0)
	for preset, expr := range Presets {
		a, err := Parse(preset, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Parse(expr, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		ga, _ := a.Next(nil, &start, nil, true, start)
		gb, _ := b.Next(nil, &start, nil, true, start)
		if ga != gb {
			t.Errorf("%s gives %v, %s gives %v", preset, ga, expr, gb)
		}
	}
}
