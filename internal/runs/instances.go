package runs

import (
	"github.com/google/uuid"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// NewTaskInstances returns the initial task instances of a run of spec: one
// per task in state none, with map_index -1 (for a mapped task this is the
// placeholder the scheduler expands once its upstreams are done).
//
// Defaults: queue "default", pool "default_pool", one pool slot, and
// max_tries = retries + 1. The priority weight follows Airflow's default
// "downstream" weight rule: the task's own weight (1 when unset) plus the
// weights of every task downstream of it, so long chains start first.
func NewTaskInstances(spec *core.DAG) []store.NewTaskInstance {
	weights := PriorityWeights(spec)
	out := make([]store.NewTaskInstance, 0, len(spec.Tasks))
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		queue := queueOf(t)
		pool := t.Pool
		if pool == "" {
			pool = core.DefaultPool
		}
		out = append(out, store.NewTaskInstance{
			ID:             uuid.NewString(),
			TaskID:         t.TaskID,
			MapIndex:       core.NoMapIndex,
			MaxTries:       max(t.Retries, 0) + 1,
			Queue:          queue,
			Pool:           pool,
			PoolSlots:      max(t.PoolSlots, 1),
			PriorityWeight: weights[t.TaskID],
			Operator:       t.Operator,
			State:          core.TINone,
		})
	}
	return out
}

// PriorityWeights returns every task's effective priority weight under the
// "downstream" rule: its own weight (1 when unset) plus the own weights of
// all tasks reachable downstream of it.
func PriorityWeights(spec *core.DAG) map[string]int {
	own := make(map[string]int, len(spec.Tasks))
	for _, t := range spec.Tasks {
		w := t.PriorityWeight
		if w == 0 {
			w = 1
		}
		own[t.TaskID] = w
	}
	down := spec.Downstream()
	out := make(map[string]int, len(spec.Tasks))
	for _, t := range spec.Tasks {
		seen := map[string]bool{t.TaskID: true}
		stack := []string{t.TaskID}
		total := 0
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			total += own[id]
			for _, d := range down[id] {
				if !seen[d] {
					seen[d] = true
					stack = append(stack, d)
				}
			}
		}
		out[t.TaskID] = total
	}
	return out
}

// queueOf is the queue t's instances go to.
func queueOf(t *core.Task) string {
	if t.Queue == "" {
		return core.DefaultQueue
	}
	return t.Queue
}

// Queues lists the queues spec's tasks go to, sorted, each once: what a
// worker running every task of a run (`weir dags test`'s) claims from.
func Queues(spec *core.DAG) []string {
	var out []string
	for i := range spec.Tasks {
		if q := queueOf(&spec.Tasks[i]); !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return out
}
