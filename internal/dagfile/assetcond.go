package dagfile

import (
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// schedule decodes the schedule field: a time schedule (a string), a list
// of assets (all of them), a condition ({any: [...]} or {all: [...]},
// nested: docs/assets.md#conditional-schedules) or an asset-or-time
// schedule ({cron: "...", assets: <a list or a condition>}).
func (d *decoder) schedule(n *node, f field, dag *core.DAG) {
	switch n.kind {
	case kNull:
	case kSeq:
		dag.AssetSchedule = d.assetRefs(n, f)
	case kMap:
		if n.get("cron") == nil && n.get("assets") == nil {
			d.assetsSchedule(n, f, dag)
			return
		}
		d.checkKeys(n, f, []string{"cron", "assets"})
		cron, assets := n.get("cron"), n.get("assets")
		if cron == nil || assets == nil {
			d.fail(n, f, "an asset-or-time schedule has both cron (a time schedule) and assets (a list or a condition)")
			return
		}
		dag.Schedule, _ = d.str(cron, f.key("cron"))
		dag.AssetOrTime = true
		d.assetsSchedule(assets, f.key("assets"), dag)
	default:
		dag.Schedule, _ = d.str(n, f)
	}
}

// assetsSchedule decodes the asset part of a schedule: a list or a
// condition.
func (d *decoder) assetsSchedule(n *node, f field, dag *core.DAG) {
	if n.kind == kSeq {
		dag.AssetSchedule = d.assetRefs(n, f)
		return
	}
	c := d.assetCondition(n, f)
	dag.AssetCondition, dag.AssetSchedule = &c, c.Refs()
}

// assetCondition decodes {any: [...]} or {all: [...]} whose items are asset
// references or nested conditions.
func (d *decoder) assetCondition(n *node, f field) core.AssetCondition {
	d.at(f, n)
	var c core.AssetCondition
	if n.kind != kMap {
		d.fail(n, f, "must be a condition {any: [...]} or {all: [...]}, not %s", describe(n))
		return c
	}
	d.checkKeys(n, f, []string{"any", "all"})
	if len(n.keys) != 1 {
		d.fail(n, f, "a condition has exactly one of any or all")
		return c
	}
	for _, op := range []struct {
		key string
		to  *[]core.AssetCondition
	}{{"any", &c.Any}, {"all", &c.All}} {
		v := n.get(op.key)
		if v == nil {
			continue
		}
		g := f.key(op.key)
		if v.kind != kSeq || len(v.items) == 0 {
			d.fail(v, g, "must be a non-empty list of assets and conditions")
			return c
		}
		*op.to = make([]core.AssetCondition, 0, len(v.items))
		for i, item := range v.items {
			if item.kind == kMap && (item.get("any") != nil || item.get("all") != nil) {
				*op.to = append(*op.to, d.assetCondition(item, g.idx(i)))
				continue
			}
			r := d.assetRef(item, g.idx(i))
			*op.to = append(*op.to, core.AssetCondition{Ref: &r})
		}
	}
	return c
}

// validateSchedule checks how the time and asset schedules combine and the
// shape of a condition (the SDK builds one without the decoder).
func validateSchedule(ps *problems, d *core.DAG, known []string) {
	if d.Schedule != "" && len(d.AssetSchedule) > 0 && !d.AssetOrTime {
		ps.add("schedule", "a DAG has either a time schedule or a list of assets, not both (an asset-or-time schedule runs on either)")
	}
	if d.AssetOrTime && (d.Schedule == "" || len(d.AssetSchedule) == 0) {
		ps.add("schedule", "an asset-or-time schedule needs both a time schedule and assets")
	}
	if d.AssetCondition != nil {
		path := "schedule"
		if d.AssetOrTime {
			path = "schedule.assets"
		}
		checkCondition(ps, d, path, d.AssetCondition, known)
	}
	validateAssetRuns(ps, d)
}

// validateAssetRuns checks asset_runs: a known mode, on a DAG scheduled on
// assets, and per_event only with a schedule one event can meet.
func validateAssetRuns(ps *problems, d *core.DAG) {
	switch {
	case !d.AssetRuns.Valid():
		ps.add("asset_runs", "%q is not one of coalesce (the default), per_partition, per_event", d.AssetRuns)
	case d.AssetRuns.Partitioned() && len(d.AssetSchedule) == 0:
		ps.add("asset_runs", "%s needs a schedule on assets (runs are made from asset events)", d.AssetRuns)
	case d.AssetRuns == core.AssetRunsPerEvent && !core.SingleEventMeets(d.AssetCondition, d.AssetSchedule):
		ps.add("asset_runs", "per_event needs a schedule that one event can meet (one asset, or an any-of): "+
			"with several assets, use per_partition to run once each has an event of the same partition key")
	}
}

// checkCondition checks that every node of c is exactly one of a reference
// (to a known asset, or an alias), a non-empty all or a non-empty any.
func checkCondition(ps *problems, d *core.DAG, path string, c *core.AssetCondition, known []string) {
	set := 0
	if c.Ref != nil {
		set++
	}
	for _, subs := range [][]core.AssetCondition{c.All, c.Any} {
		if subs != nil {
			set++
		}
	}
	switch {
	case set != 1 || (c.Ref == nil && len(c.All)+len(c.Any) == 0):
		ps.add(path, "a condition is exactly one of an asset, a non-empty all-of or a non-empty any-of")
	case c.Ref != nil:
		checkAssetRef(ps, d, path, *c.Ref, known)
	}
	for i := range c.All {
		checkCondition(ps, d, fmt.Sprintf("%s.all[%d]", path, i), &c.All[i], known)
	}
	for i := range c.Any {
		checkCondition(ps, d, fmt.Sprintf("%s.any[%d]", path, i), &c.Any[i], known)
	}
}
