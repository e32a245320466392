package schedule

import "github.com/weirflow/weir/internal/core"

// RunInterval is the data interval a run covers: its data interval, or
// its logical date when it has none.
func RunInterval(r *core.DagRun) *Interval {
	iv := &Interval{}
	if r.LogicalDate != nil {
		iv.Start, iv.End = *r.LogicalDate, *r.LogicalDate
	}
	if r.DataIntervalStart != nil {
		iv.Start = *r.DataIntervalStart
	}
	if r.DataIntervalEnd != nil {
		iv.End = *r.DataIntervalEnd
	}
	return iv
}
