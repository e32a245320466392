package runs

import (
	"slices"

	"github.com/weirflow/weir/internal/core"
)

// FollowOn is what the success of a try decides on its own for the tasks
// downstream of it in its run, in the transaction that records the success
// (Airflow's "mini scheduler"; docs/adr/0029-try-ends-schedule-their-successors.md).
// It decides only what the scheduler would decide the same way: instances
// whose trigger rule now says run (a decision no later end can change: a
// rule that says run goes on saying it as more upstreams end). Everything
// else is left to the scheduler.
type FollowOn struct {
	// Schedule lists the none-state instances of downstream tasks whose
	// trigger rule now says run (none → scheduled).
	Schedule []string
	// NeedsScheduler reports a decision left to the scheduler: a
	// downstream instance to skip, to fail upstream, to expand or to start
	// from a trigger, a stream the task produced — or an instance that
	// waits on another upstream: that one's end, committing at the same
	// time, may have read this try as unfinished and decided to wait too,
	// so the scheduler, woken by both after their commits, looks again.
	NeedsScheduler bool
}

// HasDownstream reports whether some task of spec depends on task: only
// then may its success have a FollowOn.
func HasDownstream(spec *core.DAG, task string) bool {
	for i := range spec.Tasks {
		if slices.Contains(spec.Tasks[i].DependsOn, task) {
			return true
		}
	}
	return false
}

// FollowOnReads returns what DecideFollowOn needs read for the success of
// done: the tasks whose instances it decides (done's downstream tasks), and
// the tasks whose instances' states it counts (their other upstream tasks,
// and done's own task when it is mapped: the states of its other map
// indexes).
func FollowOnReads(spec *core.DAG, done *core.TaskInstance) (down, counted []string) {
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		if !slices.Contains(t.DependsOn, done.TaskID) {
			continue
		}
		down = append(down, t.TaskID)
		for _, up := range t.DependsOn {
			if (up != done.TaskID || done.MapIndex != core.NoMapIndex) && !slices.Contains(counted, up) {
				counted = append(counted, up)
			}
		}
	}
	return down, counted
}

// DecideFollowOn decides FollowOn for the success of done, a try of a task
// of spec: downs holds the run's instances of the tasks FollowOnReads names
// first, and counts the states of the instances of those it names second,
// by task (done's own success included when it is mapped).
func DecideFollowOn(spec *core.DAG, done *core.TaskInstance, downs []core.TaskInstance, counts map[string]map[core.TIState]int) FollowOn {
	var f FollowOn
	f.NeedsScheduler = spec.Iterated(done.TaskID) // it produced a stream: its close is the scheduler's
	for i := range downs {
		ti := &downs[i]
		task := spec.Task(ti.TaskID)
		switch {
		case task == nil:
			continue
		case ti.State != core.TINone:
			continue
		case task.Mapped() || task.Iterates() || task.StartTrigger != nil:
			f.NeedsScheduler = true
			continue
		}
		var c core.UpstreamCounts
		for _, up := range task.DependsOn {
			if up == done.TaskID && done.MapIndex == core.NoMapIndex {
				c.Add(core.TISuccess, 1)
				continue
			}
			for state, n := range counts[up] {
				c.Add(state, n)
			}
		}
		switch task.TriggerRule.Evaluate(c) {
		case core.Run:
			f.Schedule = append(f.Schedule, ti.ID)
		case core.Wait, core.SkipTask, core.UpstreamFailed:
			f.NeedsScheduler = true
		}
	}
	return f
}
