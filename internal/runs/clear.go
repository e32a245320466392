package runs

import (
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// Clearable returns the instances a clear resets, in their order: every
// one not in state none (it has nothing to re-run), or with onlyFailed
// only the failed and upstream_failed ones. It is the one rule for what a
// clear selects, whether it is carried out or only shown (dry run).
func Clearable(tis []core.TaskInstance, onlyFailed bool) []core.TaskInstance {
	out := []core.TaskInstance{}
	for _, ti := range tis {
		failed := ti.State == core.TIFailed || ti.State == core.TIUpstreamFailed
		if failed || (!onlyFailed && ti.State != core.TINone) {
			out = append(out, ti)
		}
	}
	return out
}

// WithDownstream returns taskIDs and every task downstream of them in
// spec, transitively (Airflow's clear --downstream), in the DAG's task
// order. An id spec does not define is kept, so the caller's "no such task"
// error still names it.
func WithDownstream(spec *core.DAG, taskIDs []string) []string {
	return withRelatives(spec, taskIDs, spec.Downstream())
}

// WithUpstream is WithDownstream the other way: taskIDs and every task
// they depend on, transitively.
func WithUpstream(spec *core.DAG, taskIDs []string) []string {
	up := make(map[string][]string, len(spec.Tasks))
	for _, t := range spec.Tasks {
		up[t.TaskID] = t.DependsOn
	}
	return withRelatives(spec, taskIDs, up)
}

// withRelatives returns taskIDs and every task reached from them along
// edges, in spec's task order, then the ids spec does not define.
func withRelatives(spec *core.DAG, taskIDs []string, edges map[string][]string) []string {
	picked := map[string]bool{}
	queue := append([]string(nil), taskIDs...)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if picked[id] {
			continue
		}
		picked[id] = true
		queue = append(queue, edges[id]...)
	}
	var out []string
	for _, t := range spec.Tasks {
		if picked[t.TaskID] {
			out = append(out, t.TaskID)
			delete(picked, t.TaskID)
		}
	}
	for _, id := range taskIDs {
		if picked[id] {
			out = append(out, id)
		}
	}
	return out
}

// ClearExtraTries is how much a clear raises max_tries so that the new try
// (try_number+1) may run and then retry as often as task allows (nil =
// the task left the DAG: its recorded max_tries stand for its retries).
func ClearExtraTries(ti *core.TaskInstance, task *core.Task) int {
	retries := ti.MaxTries - 1
	if task != nil {
		retries = task.Retries
	}
	return max(ti.TryNumber+1+retries-ti.MaxTries, 0)
}

// Markable reports whether an operator may set a task instance to state
// by hand (success, failed or skipped); the error wraps core.ErrInvalid and
// names the allowed states.
func Markable(state core.TIState) error {
	if state == core.TISuccess || state == core.TIFailed || state == core.TISkipped {
		return nil
	}
	return fmt.Errorf("state %q cannot be set by hand; allowed: success, failed, skipped: %w", state, core.ErrInvalid)
}

// Describe names a task instance in errors and logs: dag, run, task and map
// index (when mapped).
func Describe(ti *core.TaskInstance) string {
	if ti.MapIndex == core.NoMapIndex {
		return fmt.Sprintf("dag %q run %q task %q", ti.DagID, ti.RunID, ti.TaskID)
	}
	return fmt.Sprintf("dag %q run %q task %q map_index %d", ti.DagID, ti.RunID, ti.TaskID, ti.MapIndex)
}

// Target names a task instance in audit entries: dag/run/task[/map_index].
func Target(ti *core.TaskInstance) string {
	t := ti.DagID + "/" + ti.RunID + "/" + ti.TaskID
	if ti.MapIndex >= 0 {
		t += fmt.Sprintf("/%d", ti.MapIndex)
	}
	return t
}
