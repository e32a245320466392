package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// TestAssetOrTimeSchedule runs the rows of docs/assets.md#asset-or-time
// through a real scheduler pass: a DAG on `{cron: "@daily", assets: [a,
// b]}` whose day is due or not, with events of none, some or all of its
// assets queued, gets a scheduled run when due, an asset-triggered run
// (which consumes the queued events) when its assets are met, both when
// both hold; a scheduled run consumes nothing, so events that do not yet
// meet the assets stay queued.
func TestAssetOrTimeSchedule(t *testing.T) {
	t.Parallel()
	a, b := core.Asset{Name: "a", URI: "s3://x/a"}, core.Asset{Name: "b", URI: "s3://x/b"}
	tests := []struct {
		timeDue bool
		queued  string // the assets with events
		want    string // the runs' types with the events each consumed, oldest first; then what is still queued
	}{
		{false, "", "[] queued []"},
		{false, "a", "[] queued [a]"},
		{false, "a b", "[asset_triggered:2] queued []"},
		{true, "", "[scheduled:0] queued []"},
		{true, "a", "[scheduled:0] queued [a]"},
		{true, "a b", "[scheduled:0 asset_triggered:2] queued []"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("due=%v,queued=%s", tc.timeDue, tc.queued), func(t *testing.T) {
			t.Parallel()
			start := t0.Add(-48 * time.Hour) // yesterday's interval has ended
			if !tc.timeDue {
				start = t0.Add(time.Hour) // the first interval ends after tomorrow begins
			}
			h := newHarness(t, core.DAG{DagID: "either", Schedule: "@daily", StartDate: &start, AssetOrTime: true,
				Assets: []core.Asset{a, b}, AssetSchedule: []core.AssetRef{{Name: "a"}, {Name: "b"}},
				Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}})
			h.syncAssets()
			for _, name := range strings.Fields(tc.queued) {
				h.assetEvent(name)
			}
			h.step()
			list, evs := h.assetRuns("either")
			var runs []string
			for i, r := range list {
				runs = append(runs, fmt.Sprintf("%s:%d", r.RunType, len(evs[i])))
			}
			queue, err := h.st.AssetQueueList(h.ctx, "either")
			if err != nil {
				t.Fatal(err)
			}
			var queued []string
			for _, e := range queue {
				queued = append(queued, e.AssetName)
			}
			if got := fmt.Sprintf("%v queued %v", runs, queued); got != tc.want {
				t.Errorf("after a pass: %s, want %s", got, tc.want)
			}
		})
	}
}
