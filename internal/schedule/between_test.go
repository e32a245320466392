package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestBetween(t *testing.T) {
	t.Parallel()
	now := utc(2024, 3, 1, 0, 0)
	tests := []struct {
		name       string
		expr       string
		timetable  string
		args       TriggerArgs
		from, to   time.Time
		start, end *time.Time
		want       []time.Time // logical dates
		wantErr    string
	}{
		{name: "daily, both ends included", expr: "@daily", from: utc(2024, 1, 1, 0, 0), to: utc(2024, 1, 3, 0, 0),
			want: []time.Time{utc(2024, 1, 1, 0, 0), utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0)}},
		{name: "from between fire times starts at the next", expr: "@daily", from: utc(2024, 1, 1, 6, 0), to: utc(2024, 1, 3, 0, 0),
			want: []time.Time{utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0)}},
		{name: "clamped to the DAG's start and end dates", expr: "@daily", from: utc(2024, 1, 1, 0, 0), to: utc(2024, 1, 9, 0, 0),
			start: ptr(utc(2024, 1, 3, 0, 0)), end: ptr(utc(2024, 1, 4, 0, 0)),
			want: []time.Time{utc(2024, 1, 3, 0, 0), utc(2024, 1, 4, 0, 0)}},
		{name: "incomplete intervals are left to the scheduler", expr: "@daily", from: utc(2024, 2, 28, 0, 0), to: utc(2024, 3, 5, 0, 0),
			want: []time.Time{utc(2024, 2, 28, 0, 0), utc(2024, 2, 29, 0, 0)}},
		{name: "duration keeps the grid of the start date", expr: "6h", from: utc(2024, 1, 1, 1, 0), to: utc(2024, 1, 1, 13, 0),
			start: ptr(utc(2023, 12, 31, 3, 0)), want: []time.Time{utc(2024, 1, 1, 3, 0), utc(2024, 1, 1, 9, 0)}},
		{name: "once: the start date when in range", expr: "@once", from: utc(2024, 1, 1, 0, 0), to: utc(2024, 1, 9, 0, 0),
			start: ptr(utc(2024, 1, 5, 0, 0)), want: []time.Time{utc(2024, 1, 5, 0, 0)}},
		{name: "trigger timetable: each fire time in range, now's included", expr: "@daily", timetable: CronTriggerTimetable,
			from: utc(2024, 2, 28, 0, 0), to: utc(2024, 3, 5, 0, 0),
			want: []time.Time{utc(2024, 2, 28, 0, 0), utc(2024, 2, 29, 0, 0), utc(2024, 3, 1, 0, 0)}},
		{name: "trigger timetable with an interval: every logical date in range", expr: "@daily", timetable: CronTriggerTimetable,
			args: TriggerArgs{Interval: 24 * time.Hour}, from: utc(2024, 1, 2, 0, 0), to: utc(2024, 1, 4, 0, 0),
			want: []time.Time{utc(2024, 1, 2, 0, 0), utc(2024, 1, 3, 0, 0), utc(2024, 1, 4, 0, 0)}},
		{name: "no schedule: nothing", expr: "", from: utc(2024, 1, 1, 0, 0), to: utc(2024, 1, 9, 0, 0)},
		{name: "too many", expr: "@hourly", from: utc(2024, 1, 1, 0, 0), to: utc(2024, 1, 9, 0, 0), wantErr: "more than 100 runs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tt, err := ParseTimetable(tc.expr, tc.timetable, tc.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Between(tt, tc.from, tc.to, tc.start, tc.end, now, 100)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want logical dates %v", got, tc.want)
			}
			for i := range got {
				if !got[i].Start.Equal(tc.want[i]) {
					t.Errorf("interval %d starts %s, want %s", i, got[i].Start, tc.want[i])
				}
			}
		})
	}
}
