package dagfile

import (
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/schedule"
)

// timetable decodes a timetable: its name, or a mapping of its type and
// CronTriggerTimetable's arguments (Airflow's interval and
// run_immediately: true, false or a duration).
func (d *decoder) timetable(n *node, f field, dag *core.DAG) {
	if n.kind != kMap {
		dag.Timetable, _ = d.str(n, f)
		return
	}
	d.at(f, n)
	d.checkKeys(n, f, []string{"type", "interval", "run_immediately"})
	t := n.get("type")
	if t == nil {
		d.fail(n, f, "a timetable mapping needs its type (%s)", schedule.CronTriggerTimetable)
		return
	}
	dag.Timetable, _ = d.str(t, f.key("type"))
	if v := n.get("interval"); v != nil {
		dag.TimetableInterval = d.duration(v, f.key("interval"))
	}
	if v := n.get("run_immediately"); v != nil {
		f := f.key("run_immediately")
		d.at(f, v)
		if r, ok := runImmediately(v); ok {
			dag.RunImmediately = &r
		} else {
			d.fail(v, f, "must be true, false or a positive duration such as \"30m\" (or a number of seconds), not %s", describe(v))
		}
	}
}

// runImmediately reads run_immediately: a boolean, or a positive duration
// (a string or a number of seconds).
func runImmediately(n *node) (core.RunImmediately, bool) {
	if b, ok := n.value.(bool); ok && n.kind == kScalar {
		return core.RunImmediately{Never: !b}, true
	}
	within, ok := durationOf(n)
	return core.RunImmediately{Within: within}, ok && within > 0
}
