package scheduler

import "github.com/weirflow/weir/internal/core"

// graph is a DAG spec prepared for repeated scheduling decisions: tasks by
// id, a topological order and the leaf set. It is immutable once built and
// cached per DAG version.
type graph struct {
	spec  *core.DAG
	tasks map[string]*core.Task
	order []*core.Task // upstream first
	leaf  map[string]bool
	down  map[string][]string // each task's downstream tasks (a producer's iterating ones too)
	// producers holds the tasks other tasks iterate over (their trigger
	// runs produce the run's stream for them); iterating, those tasks
	// (lazy, by id).
	producers map[string]bool
	iterating []*core.Task
	lazy      map[string]bool
}

// compile prepares spec. Tasks on a cycle (which validation rejects) come
// last in spec order so that nothing is lost.
func compile(spec *core.DAG) *graph {
	g := &graph{
		spec:  spec,
		tasks: make(map[string]*core.Task, len(spec.Tasks)),
		order: make([]*core.Task, 0, len(spec.Tasks)),
		leaf:  make(map[string]bool, len(spec.Tasks)),

		producers: map[string]bool{},
		lazy:      map[string]bool{},
	}
	for i := range spec.Tasks {
		g.tasks[spec.Tasks[i].TaskID] = &spec.Tasks[i]
	}
	// A stream producer comes before the tasks iterating over it, as an
	// upstream does.
	down := spec.Downstream()
	for i := range spec.Tasks {
		if t := &spec.Tasks[i]; t.Iterates() && g.tasks[t.Iterate] != nil {
			down[t.Iterate] = append(down[t.Iterate], t.TaskID)
			g.producers[t.Iterate] = true
			g.iterating = append(g.iterating, t)
			g.lazy[t.TaskID] = true
		}
	}
	g.down = down
	indeg := make(map[string]int, len(spec.Tasks))
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		g.leaf[t.TaskID] = len(down[t.TaskID]) == 0
		for _, up := range t.DependsOn {
			if g.tasks[up] != nil {
				indeg[t.TaskID]++
			}
		}
		if t.Iterates() && g.tasks[t.Iterate] != nil {
			indeg[t.TaskID]++
		}
	}
	var queue []string
	for i := range spec.Tasks {
		if indeg[spec.Tasks[i].TaskID] == 0 {
			queue = append(queue, spec.Tasks[i].TaskID)
		}
	}
	done := make(map[string]bool, len(spec.Tasks))
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		done[id] = true
		g.order = append(g.order, g.tasks[id])
		for _, d := range down[id] {
			if indeg[d]--; indeg[d] == 0 {
				queue = append(queue, d)
			}
		}
	}
	for i := range spec.Tasks {
		if !done[spec.Tasks[i].TaskID] {
			g.order = append(g.order, &spec.Tasks[i])
		}
	}
	return g
}
