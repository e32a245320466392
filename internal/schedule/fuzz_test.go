package schedule_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/schedule"
)

// FuzzParse feeds schedule expressions (cron, presets, durations, junk) to
// Parse: it never panics, and a schedule it accepts yields data intervals
// that end at or after they start and move strictly forward.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"@daily", "@once", "30 2 * * 1-5", "*/5 * * * *", "0 0 30 2 *", "90m", "1h30m",
		"0 0 * * 7", "59 23 31 12 *", "@weekly", "None", "1-2/0 * * * *", "0 0 L * *", "-1m", "1ns"} {
		f.Add(s)
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.Add(400 * 24 * time.Hour)
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 200 {
			return
		}
		tt, err := schedule.Parse(expr, nil)
		if err != nil {
			return
		}
		_ = tt.Summary()
		var last *schedule.Interval
		for range 3 {
			iv, ok := tt.Next(last, &start, nil, true, now)
			if !ok {
				return
			}
			if iv.End.Before(iv.Start) {
				t.Fatalf("%q: interval %v ends before it starts", expr, iv)
			}
			if last != nil && !iv.Start.After(last.Start) {
				t.Fatalf("%q: interval %v does not move forward from %v", expr, iv, *last)
			}
			last = &iv
		}
	})
}
