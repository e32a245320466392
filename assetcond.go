package weir

import "github.com/weirflow/weir/internal/core"

// AssetExpr is what a conditional asset schedule combines: an asset or an
// alias (AssetRef), or AnyOf and AllOf of them, nested to any depth
// (Airflow's `(a | b) & c`).
type AssetExpr interface {
	condition(d *DAG) core.AssetCondition
}

func (r AssetRef) condition(d *DAG) core.AssetCondition {
	ref := d.useAssets([]AssetRef{r})[0]
	return core.AssetCondition{Ref: &ref}
}

type assetOp struct {
	any   bool
	exprs []AssetExpr
}

func (o assetOp) condition(d *DAG) core.AssetCondition {
	subs := make([]core.AssetCondition, len(o.exprs))
	for i, e := range o.exprs {
		subs[i] = e.condition(d)
	}
	if o.any {
		return core.AssetCondition{Any: subs}
	}
	return core.AssetCondition{All: subs}
}

// AnyOf is met when any of exprs is (Airflow's a | b).
func AnyOf(exprs ...AssetExpr) AssetExpr { return assetOp{any: true, exprs: exprs} }

// AllOf is met when every one of exprs is (Airflow's a & b).
func AllOf(exprs ...AssetExpr) AssetExpr { return assetOp{exprs: exprs} }

// ScheduleOnCondition runs the DAG when the assets with new events since
// its last asset-triggered run meet expr, such as
// weir.AllOf(weir.AnyOf(a, b), c); the run consumes every queued event
// (docs/assets.md#conditional-schedules).
func ScheduleOnCondition(expr AssetExpr) DAGOption {
	return func(d *DAG) {
		c := expr.condition(d)
		d.spec.AssetCondition, d.spec.AssetSchedule = &c, c.Refs()
	}
}

// AssetsOrTime makes a DAG with both a time Schedule and an asset schedule
// (ScheduleOnAssets or ScheduleOnCondition) run on either: each time the
// schedule fires, and each time its assets are met (Airflow's
// AssetOrTimeSchedule).
func AssetsOrTime() DAGOption { return func(d *DAG) { d.spec.AssetOrTime = true } }

// RunPerPartition makes an asset-scheduled DAG run once per partition key
// instead of coalescing: the run for key k takes the queued events with key
// k once they meet the schedule on their own, and carries k
// (TaskContext.PartitionKey, {{ partition_key }}). YAML's
// asset_runs: per_partition (docs/emission.md#consumers).
func RunPerPartition() DAGOption {
	return func(d *DAG) { d.spec.AssetRuns = core.AssetRunsPerPartition }
}

// RunPerEvent makes an asset-scheduled DAG run once per event, carrying the
// event's partition key; its schedule must be one an event can meet alone
// (one asset, or an any-of). YAML's asset_runs: per_event.
func RunPerEvent() DAGOption {
	return func(d *DAG) { d.spec.AssetRuns = core.AssetRunsPerEvent }
}
