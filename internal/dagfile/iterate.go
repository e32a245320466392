package dagfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// validateIterate checks every task's iterate (docs/streaming.md#lazy-expansion):
// it names another task of the DAG that produces a stream (a task with
// stream: true, or a deferrable sensor whose trigger type is among
// streamTypes; any sensor when streamTypes is nil), not mapped itself, not
// downstream of the iterating task, and the iterating task does not also
// expand.
func validateIterate(ps *problems, d *core.DAG, streamTypes []string) {
	for i := range d.Tasks {
		t := &d.Tasks[i]
		if !t.Iterates() {
			continue
		}
		p := fmt.Sprintf("tasks[%d].iterate", i)
		prod := d.Task(t.Iterate)
		switch {
		case t.Iterate == t.TaskID:
			ps.add(p, "a task cannot iterate over itself")
		case prod == nil:
			ps.add(p, "unknown task %q%s", t.Iterate, didYouMean(t.Iterate, taskIDs(d)))
		case t.Mapped():
			ps.add(p, "set either expand or iterate, not both")
		case prod.HasMapIndexes():
			ps.add(p, "task %q is mapped; a stream producer is one task instance", t.Iterate)
		case prod.HandlesStream():
			ps.add(p, "task %q handles its stream itself (handle_command or handle_function): iterate over a producer without a handler", t.Iterate)
		case !producesStream(prod, streamTypes):
			ps.add(p, "task %q is not a stream producer: iterate over a task with stream: true (weir.Streams() in Go; it pushes "+
				"items with weir stream push or tc.Stream().Push) or a deferrable sensor whose trigger streams (%s)", t.Iterate, streamTypesText(streamTypes))
		case dependsOn(d, t.Iterate, t.TaskID):
			ps.add(p, "task %q depends on %q: a producer must not wait for the task iterating over it", t.Iterate, t.TaskID)
		case prod.SoftFail():
			ps.add(p, "task %q has soft_fail, which a stream producer cannot use: its timeout is retried, the retry resuming the stream", t.Iterate)
		}
	}
}

// validateHandlers checks that every streaming operator's trigger streams
// (docs/streaming.md#streaming-operators).
func validateHandlers(ps *problems, d *core.DAG, streamTypes []string) {
	for i := range d.Tasks {
		t := &d.Tasks[i]
		if t.HandlesStream() && t.StartTrigger != nil && !producesStream(t, streamTypes) {
			ps.add(fmt.Sprintf("tasks[%d].trigger.type", i), "a sensor with a stream handler waits on a trigger that streams (%s), not %q",
				streamTypesText(streamTypes), t.StartTrigger.Trigger.Type)
		}
		if t.HandlesStream() && t.SoftFail() {
			ps.add(fmt.Sprintf("tasks[%d].soft_fail", i), "a sensor with a stream handler cannot use soft_fail: its timeout is retried, the retry resuming the stream")
		}
	}
}

// producesStream reports whether t is a stream producer.
func producesStream(t *core.Task, streamTypes []string) bool {
	if t.Stream {
		return true
	}
	if t.StartTrigger == nil || t.Operator != "sensor" {
		return false
	}
	return streamTypes == nil || slices.Contains(streamTypes, t.StartTrigger.Trigger.Type)
}

func streamTypesText(types []string) string {
	switch {
	case types == nil:
		return "a type registered as streaming"
	case len(types) == 0:
		return "no trigger type streams in this program"
	}
	return "types that stream: " + strings.Join(types, ", ")
}

// dependsOn reports whether task id (transitively) depends on up.
func dependsOn(d *core.DAG, id, up string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(id string) bool {
		if seen[id] {
			return false
		}
		seen[id] = true
		t := d.Task(id)
		if t == nil {
			return false
		}
		for _, u := range t.DependsOn {
			if u == up || walk(u) {
				return true
			}
		}
		return false
	}
	return walk(id)
}

func taskIDs(d *core.DAG) []string {
	out := make([]string, len(d.Tasks))
	for i := range d.Tasks {
		out[i] = d.Tasks[i].TaskID
	}
	return out
}
