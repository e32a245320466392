package runs_test

import (
	"slices"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

func TestQueues(t *testing.T) {
	t.Parallel()
	spec := core.DAG{Tasks: []core.Task{{TaskID: "a"}, {TaskID: "b", Queue: "gpu"}, {TaskID: "c", Queue: "default"}, {TaskID: "d", Queue: "gpu"}}}
	if got, want := runs.Queues(&spec), []string{"default", "gpu"}; !slices.Equal(got, want) {
		t.Errorf("Queues = %v, want %v", got, want)
	}
}
