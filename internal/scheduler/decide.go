package scheduler

import (
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Plan is what one scheduling pass does to one running DAG run. Decide
// computes it from the run's task instances alone; the scheduler applies it.
type Plan struct {
	// Schedule lists none-state instances whose trigger rule says run
	// (none → scheduled).
	Schedule []string
	// StartDeferred lists none-state instances that may run and whose task
	// starts from a trigger: they begin deferred, in the triggerer
	// (none → deferred).
	StartDeferred []core.TaskInstance
	// Skip lists none-state instances whose trigger rule says skip.
	Skip []string
	// UpstreamFailed lists none-state instances whose trigger rule says
	// upstream_failed.
	UpstreamFailed []string
	// Remove lists none-state instances whose task is not in the run's DAG
	// version (none → removed).
	Remove []string
	// Expand lists mapped placeholders (map_index -1, state none) whose
	// trigger rule says run: the scheduler resolves their expand arguments
	// and replaces them with one instance per element.
	Expand []core.TaskInstance
	// Iterate lists the placeholders of tasks mapped over a stream that
	// get new instances (one per new item) or close (IterateStep).
	Iterate []IterateStep
	// Retry lists up_for_retry instances whose next_retry_at has passed
	// (a new try, scheduled).
	Retry []core.TaskInstance
	// NextRetryAt is the earliest next_retry_at still in the future, if any.
	NextRetryAt *time.Time
	// RunState is success or failed when every instance is (or by this plan
	// becomes) terminal, "" while the run goes on.
	RunState core.DagRunState
}

// empty reports whether the plan changes nothing.
func (p *Plan) empty() bool {
	return len(p.Schedule)+len(p.StartDeferred)+len(p.Skip)+len(p.UpstreamFailed)+len(p.Remove)+len(p.Expand)+len(p.Iterate)+len(p.Retry) == 0 &&
		p.RunState == ""
}

// Decide computes the plan for one running run of spec from its current task
// instances at now. It is pure.
//
// A none-state instance is decided by its task's trigger rule over the
// states of its upstream tasks' instances (each map index counts once; a
// mapped upstream not yet expanded counts as one undone instance). Tasks are
// visited in topological order and a skip or upstream_failed decided here
// counts for the downstream tasks at once, so a failure propagates down a
// chain in one pass. A mapped placeholder that may run is expanded rather
// than scheduled.
//
// The run's state follows Airflow: when every instance is terminal, the run
// failed if any leaf task (one with no downstream) has a failed or
// upstream_failed instance, and succeeded otherwise.
//
// A task that iterates over a stream (core.Task.Iterate) is decided by
// its trigger rule over its depends_on alone, not its producer: its
// placeholder gets an instance per item as items arrive (streams gives
// each such task's stream, by task id; absent while the producer has not
// opened it), and goes once the stream is closed and every item has one,
// so that its downstream tasks wait for the whole expansion.
func Decide(spec *core.DAG, tis []core.TaskInstance, streams map[string]StreamHead, now time.Time) Plan {
	return compile(spec).decide(tis, streams, now)
}

// decide is Decide over a compiled spec (cached per DAG version).
func (g *graph) decide(tis []core.TaskInstance, streams map[string]StreamHead, now time.Time) Plan {
	var plan Plan
	// state holds each instance's state as this plan leaves it.
	state := make([]core.TIState, len(tis))
	byTask := make(map[string][]int, len(g.order))
	for i := range tis {
		state[i] = tis[i].State
		byTask[tis[i].TaskID] = append(byTask[tis[i].TaskID], i)
		if g.tasks[tis[i].TaskID] == nil && tis[i].State == core.TINone {
			plan.Remove = append(plan.Remove, tis[i].ID)
			state[i] = core.TIRemoved
		}
	}
	for _, task := range g.order {
		for _, i := range byTask[task.TaskID] {
			ti := &tis[i]
			switch ti.State {
			case core.TINone:
				c := upstreamCounts(task, byTask, state)
				if task.Iterates() && ti.MapIndex == core.NoMapIndex && task.TriggerRule.Evaluate(c) == core.Run {
					var head *StreamHead
					if h, ok := streams[task.TaskID]; ok {
						head = &h
					}
					decideIterate(&plan, ti, mappedCount(tis, byTask[task.TaskID]), head, producerState(byTask[task.Iterate], state), state, i)
					continue
				}
				decideWaiting(&plan, task, ti, c, state, i)
			case core.TIUpForRetry:
				if ti.NextRetryAt == nil || !ti.NextRetryAt.After(now) {
					plan.Retry = append(plan.Retry, *ti)
				} else if plan.NextRetryAt == nil || ti.NextRetryAt.Before(*plan.NextRetryAt) {
					at := *ti.NextRetryAt
					plan.NextRetryAt = &at
				}
			default: // queued, running or finished: nothing for the scheduler to decide
			}
		}
	}
	plan.RunState = g.runState(tis, state)
	for _, st := range plan.Iterate {
		if st.From <= st.Through {
			plan.RunState = "" // instances this plan creates are still to run
		}
	}
	return plan
}

func decideWaiting(plan *Plan, task *core.Task, ti *core.TaskInstance, c core.UpstreamCounts, state []core.TIState, i int) {
	switch task.TriggerRule.Evaluate(c) {
	case core.Run:
		switch {
		case task.Mapped() && ti.MapIndex == core.NoMapIndex:
			plan.Expand = append(plan.Expand, *ti)
		case task.StartTrigger != nil:
			plan.StartDeferred = append(plan.StartDeferred, *ti)
		default:
			plan.Schedule = append(plan.Schedule, ti.ID)
		}
	case core.SkipTask:
		plan.Skip = append(plan.Skip, ti.ID)
		state[i] = core.TISkipped
	case core.UpstreamFailed:
		plan.UpstreamFailed = append(plan.UpstreamFailed, ti.ID)
		state[i] = core.TIUpstreamFailed
	case core.Wait:
	}
}

// producerState is the state of a stream producer's instance (the first
// of its instances; a producer is not mapped), none when it has none.
func producerState(idx []int, state []core.TIState) core.TIState {
	if len(idx) == 0 {
		return core.TINone
	}
	return state[idx[0]]
}

// upstreamCounts summarizes the states of every instance of task's upstream
// tasks. An upstream task without instances (not in this run) is ignored.
func upstreamCounts(task *core.Task, byTask map[string][]int, state []core.TIState) core.UpstreamCounts {
	var c core.UpstreamCounts
	for _, up := range task.DependsOn {
		for _, i := range byTask[up] {
			if state[i] == tiGone {
				continue
			}
			c.Add(state[i], 1)
		}
	}
	return c
}

// runState returns the run's final state once every instance is terminal:
// failed when a leaf failed. A removed task (its every instance removed) is
// out of the run's graph, so a task whose downstream tasks were all
// removed is a leaf of the run: a `weir tasks test` run removes every task
// but the tested one, whose failure was the success of its removed
// downstream leaves.
func (g *graph) runState(tis []core.TaskInstance, state []core.TIState) core.DagRunState {
	for _, s := range state {
		if !s.Terminal() && s != tiGone {
			return ""
		}
	}
	removed := map[string]bool{} // task → every instance of it removed
	for i := range tis {
		r, seen := removed[tis[i].TaskID]
		removed[tis[i].TaskID] = (r || !seen) && state[i] == core.TIRemoved
	}
	leaf := func(task string) bool {
		if g.leaf[task] {
			return true
		}
		for _, d := range g.down[task] {
			if !removed[d] {
				return false
			}
		}
		return true
	}
	for i := range tis {
		if state[i] == tiGone || !leaf(tis[i].TaskID) {
			continue
		}
		if state[i] == core.TIFailed || state[i] == core.TIUpstreamFailed {
			return core.RunFailed
		}
	}
	return core.RunSuccess
}
