package scheduler

import "testing"

// A light pass waits behind a backlog only while workers claim from it
// and every queue they claim from keeps busyBacklog (ADR 0034).
func TestBacklogBusy(t *testing.T) {
	t.Parallel()
	const q, gpu = "default", "gpu"
	full := busyBacklog
	for _, tc := range []struct {
		name                string
		before, found, left map[string]int
		want                bool
	}{
		{"the first pass knows no claiming", nil, nil, map[string]int{q: 100}, false},
		{"claimed from, refilled above the bar", map[string]int{q: 112}, map[string]int{q: 70}, map[string]int{q: 112}, true},
		{"claimed from, left at the bar", map[string]int{q: 100}, map[string]int{q: full}, map[string]int{q: full}, true},
		{"claimed from, left below the bar", map[string]int{q: 100}, map[string]int{q: 50}, map[string]int{q: full - 1}, false},
		{"claimed to nothing (gone from the counts)", map[string]int{q: 100}, map[string]int{}, map[string]int{}, false},
		{"nothing claimed: no worker serves it", map[string]int{gpu: 100}, map[string]int{gpu: 100}, map[string]int{gpu: 100}, false},
		{"a served queue short beside an unserved full one", map[string]int{gpu: 100, q: 5}, map[string]int{gpu: 100, q: 1},
			map[string]int{gpu: 100, q: 3}, false},
		{"a served queue full beside an unserved one", map[string]int{gpu: 100, q: 100}, map[string]int{gpu: 100, q: 80},
			map[string]int{gpu: 100, q: 100}, true},
		{"a queue new this pass neither counts nor stops it", map[string]int{q: 100}, map[string]int{q: 90},
			map[string]int{q: 100, gpu: 3}, true},
	} {
		if got := backlogBusy(tc.before, tc.found, tc.left); got != tc.want {
			t.Errorf("%s: backlogBusy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
