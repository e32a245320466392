package job

import (
	"testing"
	"time"
)

// TestUpRun: the run of heartbeat writes a row's UpSince reports breaks
// at a failed write and at a write later than StaleAfter after the last
// good one, and holds otherwise.
func TestUpRun(t *testing.T) {
	t.Parallel()
	const interval = time.Second // StaleAfter: 2 s
	type write struct {
		at        float64 // seconds
		ok        bool
		wantSince float64
	}
	tests := []struct {
		name   string
		writes []write
	}{
		{"on time", []write{{0, true, 0}, {1, true, 0}, {2, true, 0}, {3.9, true, 0}}},
		{"a failed write breaks the run at the next", []write{{0, true, 0}, {1, false, 0}, {2, true, 2}, {3, true, 2}}},
		{"failures in a row", []write{{0, true, 0}, {1, false, 0}, {2, false, 2}, {3, false, 3}, {4, true, 4}, {5, true, 4}}},
		{"a late write breaks the run", []write{{0, true, 0}, {1, true, 0}, {3.5, true, 3.5}, {4.5, true, 3.5}}},
		{"late by a failure's gap", []write{{0, true, 0}, {5, true, 5}}},
		{"the first write fails", []write{{0, false, 0}, {1, true, 1}}},
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r upRun
			for i, w := range tt.writes {
				if got := r.beat(at(w.at), interval); !got.Equal(at(w.wantSince)) {
					t.Fatalf("write %d at %vs: up since %v, want %vs", i, w.at, got.Sub(base), w.wantSince)
				}
				r.wrote(at(w.at), w.ok)
			}
		})
	}
}
