package weir

import (
	"strings"
	"testing"
	"time"
)

// A conditional schedule built in Go is the same as in YAML: its
// references are defined on the DAG and the condition prints as Airflow
// writes it; a time schedule with assets needs AssetsOrTime.
func TestScheduleOnCondition(t *testing.T) {
	t.Parallel()
	a, b, c := Asset("a"), Asset("b", AssetURI("s3://b")), Asset("c")
	d := NewDAG("cond", ScheduleOnCondition(AllOf(AnyOf(a, b), c, Alias("exports"))))
	d.Noop("t")
	spec, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.AssetCondition.String(); got != "(a | b) & c & alias:exports" || len(spec.AssetSchedule) != 4 || len(spec.Assets) != 3 {
		t.Errorf("condition %q, schedule %v, assets %v", got, spec.AssetSchedule, spec.Assets)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	both := NewDAG("both", Schedule("@daily"), StartDate(start), ScheduleOnAssets(a))
	both.Noop("t")
	if err := both.Validate(); err == nil || !strings.Contains(err.Error(), "not both (an asset-or-time schedule runs on either)") {
		t.Errorf("time and assets without AssetsOrTime: %v", err)
	}
	either := NewDAG("either", Schedule("@daily"), StartDate(start), ScheduleOnAssets(a), AssetsOrTime())
	either.Noop("t")
	if err := either.Validate(); err != nil {
		t.Errorf("an asset-or-time schedule: %v", err)
	}
}

// RunPerPartition and RunPerEvent set the DAG's asset_runs as YAML does,
// and a DAG whose schedule one event cannot meet is refused per event.
func TestRunPerPartition(t *testing.T) {
	t.Parallel()
	a, b := Asset("a"), Asset("b")
	d := NewDAG("parts", ScheduleOnAssets(a, b), RunPerPartition())
	d.Noop("t")
	spec, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	if spec.AssetRuns != "per_partition" {
		t.Errorf("asset_runs = %q, want per_partition", spec.AssetRuns)
	}
	each := NewDAG("each", ScheduleOnAssets(a, b), RunPerEvent())
	each.Noop("t")
	if err := each.Validate(); err == nil || !strings.Contains(err.Error(), "per_event needs a schedule that one event can meet") {
		t.Errorf("per event on a & b: %v", err)
	}
	either := NewDAG("either", ScheduleOnCondition(AnyOf(a, b)), RunPerEvent())
	either.Noop("t")
	if err := either.Validate(); err != nil {
		t.Errorf("per event on a | b: %v", err)
	}
	timed := NewDAG("timed", Schedule("@daily"), StartDate(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), RunPerEvent())
	timed.Noop("t")
	if err := timed.Validate(); err == nil || !strings.Contains(err.Error(), "needs a schedule on assets") {
		t.Errorf("per event without assets: %v", err)
	}
}
