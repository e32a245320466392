package scheduler

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// TestDecideTriggers is the asset-or-time truth table of
// docs/assets.md#asset-or-time, row for row: whether the time schedule has
// a due interval and whether the queued events meet the asset schedule,
// and the runs a pass creates for a time schedule alone, an asset schedule
// alone (a list or a condition) and an asset-or-time schedule.
func TestDecideTriggers(t *testing.T) {
	t.Parallel()
	either := core.AssetCondition{Any: []core.AssetCondition{{Ref: &core.AssetRef{Name: "a"}}, {Ref: &core.AssetRef{Name: "b"}}}}
	specs := []struct {
		name string
		spec core.DAG
	}{
		{"cron only", core.DAG{Schedule: "0 1 * * 3"}},
		{"assets only (a list)", core.DAG{AssetSchedule: []core.AssetRef{{Name: "a"}}}},
		{"assets only (a condition)", core.DAG{AssetSchedule: either.Refs(), AssetCondition: &either}},
		{"asset-or-time", core.DAG{Schedule: "0 1 * * 3", AssetSchedule: either.Refs(), AssetCondition: &either, AssetOrTime: true}},
	}
	var (
		none      = Triggers{}
		scheduled = Triggers{Scheduled: true}
		asset     = Triggers{AssetTriggered: true}
		both      = Triggers{Scheduled: true, AssetTriggered: true}
	)
	tests := []struct {
		timeDue, assetsMet bool
		want               [4]Triggers // per spec above
	}{
		{false, false, [4]Triggers{none, none, none, none}},
		{false, true, [4]Triggers{none, asset, asset, asset}},
		{true, false, [4]Triggers{scheduled, none, none, scheduled}},
		{true, true, [4]Triggers{scheduled, asset, asset, both}},
	}
	for _, tc := range tests {
		for i, s := range specs {
			if got := DecideTriggers(&s.spec, tc.timeDue, tc.assetsMet); got != tc.want[i] {
				t.Errorf("cron due %v, assets met %v: %s makes %+v, want %+v", tc.timeDue, tc.assetsMet, s.name, got, tc.want[i])
			}
		}
	}
}
