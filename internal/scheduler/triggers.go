package scheduler

import "github.com/weirflow/weir/internal/core"

// Triggers is what one scheduling pass makes of a DAG's schedule
// (docs/assets.md#asset-or-time).
type Triggers struct {
	// Scheduled is a scheduled run of the due data interval. It consumes
	// no asset events: those stay queued for the asset side.
	Scheduled bool
	// AssetTriggered is an asset-triggered run that consumes the DAG's
	// queued events (or, with asset_runs per_partition or per_event, the
	// runs of the groups that meet the schedule).
	AssetTriggered bool
}

// DecideTriggers says which runs one pass creates for a DAG of spec, given
// whether its time schedule has a due interval (timeDue: the interval's end
// has passed) and whether its queued asset events meet its asset schedule
// (assetsMet: every listed asset has one, or core.AssetCondition.Met). It
// is pure.
//
// A time schedule alone runs when due, never on events; an asset schedule
// alone runs when met, never on time; an asset-or-time schedule
// (core.DAG.AssetOrTime: the loaders refuse a time and an asset schedule
// without it) runs on each, independently, so a pass where both hold
// creates two runs, and a scheduled run leaves the queued events to the
// asset-triggered one.
func DecideTriggers(spec *core.DAG, timeDue, assetsMet bool) Triggers {
	hasTime := spec.Schedule != ""
	hasAssets := len(spec.AssetSchedule) > 0 || spec.AssetCondition != nil
	return Triggers{Scheduled: hasTime && timeDue, AssetTriggered: hasAssets && assetsMet}
}
