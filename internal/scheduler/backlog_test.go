package scheduler

import (
	"slices"
	"testing"
)

// A light pass waits behind a backlog only while workers claim from it
// and every queue they claim from keeps busyBacklog (ADR 0034).
func TestBacklogBusy(t *testing.T) {
	t.Parallel()
	const q, gpu = "default", "gpu"
	full := busyBacklog
	for _, tc := range []struct {
		name                string
		before, found, left map[string]int
		claimed             []string
		want                bool
	}{
		{"the first queueing knows no claiming", nil, nil, map[string]int{q: 100}, nil, false},
		{"claimed from, refilled above the bar", map[string]int{q: 112}, map[string]int{q: 70}, map[string]int{q: 112}, []string{q}, true},
		{"claimed from, left at the bar", map[string]int{q: 100}, map[string]int{q: full}, map[string]int{q: full}, []string{q}, true},
		{"claimed from, left below the bar", map[string]int{q: 100}, map[string]int{q: 50}, map[string]int{q: full - 1}, []string{q}, false},
		{"claimed to nothing (gone from the counts)", map[string]int{q: 100}, map[string]int{}, map[string]int{}, []string{q}, false},
		{"nothing claimed: no worker serves it", map[string]int{gpu: 100}, map[string]int{gpu: 100}, map[string]int{gpu: 100}, nil, false},
		{"a served queue short beside an unserved full one", map[string]int{gpu: 100, q: 5}, map[string]int{gpu: 100, q: 1},
			map[string]int{gpu: 100, q: 3}, []string{q}, false},
		{"a served queue full beside an unserved one", map[string]int{gpu: 100, q: 100}, map[string]int{gpu: 100, q: 80},
			map[string]int{gpu: 100, q: 100}, []string{q}, true},
		{"a queue new this pass neither counts nor stops it", map[string]int{q: 100}, map[string]int{q: 90},
			map[string]int{q: 100, gpu: 3}, []string{q}, true},
	} {
		claimed := claimedFrom(tc.before, tc.found)
		if !slices.Equal(claimed, tc.claimed) && len(claimed)+len(tc.claimed) > 0 {
			t.Errorf("%s: claimed from %v, want %v", tc.name, claimed, tc.claimed)
		}
		if got := backlogBusy(claimed, tc.left); got != tc.want {
			t.Errorf("%s: backlogBusy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
