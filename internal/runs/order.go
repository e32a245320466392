package runs

import "github.com/weirflow/weir/internal/core"

// DependencyOrder returns spec's task ids upstreams first: every task comes
// after the tasks it depends on, and tasks free to go in either order keep
// the order the DAG lists them in. A task in a cycle (which validation
// rejects) is left out.
func DependencyOrder(spec *core.DAG) []string {
	waiting := make(map[string]int, len(spec.Tasks))
	for _, t := range spec.Tasks {
		waiting[t.TaskID] = len(t.DependsOn)
	}
	down := spec.Downstream()
	out := make([]string, 0, len(spec.Tasks))
	done := make(map[string]bool, len(spec.Tasks))
	for len(out) < len(spec.Tasks) {
		progressed := false
		for _, t := range spec.Tasks { // the first ready task in listed order
			if done[t.TaskID] || waiting[t.TaskID] > 0 {
				continue
			}
			done[t.TaskID], progressed = true, true
			out = append(out, t.TaskID)
			for _, d := range down[t.TaskID] {
				waiting[d]--
			}
			break
		}
		if !progressed {
			break
		}
	}
	return out
}
