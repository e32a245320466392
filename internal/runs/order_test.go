package runs

import (
	"slices"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

func TestDependencyOrder(t *testing.T) {
	t.Parallel()
	task := func(id string, ups ...string) core.Task { return core.Task{TaskID: id, DependsOn: ups} }
	for _, tc := range []struct {
		name  string
		tasks []core.Task
		want  []string
	}{
		{"listed order when free", []core.Task{task("b"), task("a"), task("c")}, []string{"b", "a", "c"}},
		{"upstreams first though listed last", []core.Task{task("report", "load"), task("load", "extract"), task("extract")},
			[]string{"extract", "load", "report"}},
		{"diamond", []core.Task{task("d", "b", "c"), task("c", "a"), task("b", "a"), task("a")}, []string{"a", "c", "b", "d"}},
		{"a cycle is left out", []core.Task{task("x", "y"), task("y", "x"), task("z")}, []string{"z"}},
	} {
		got := DependencyOrder(&core.DAG{Tasks: tc.tasks})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
