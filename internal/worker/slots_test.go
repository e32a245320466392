package worker

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// Slots (the metrics' weir_worker_free_slots and weir_worker_running_tries)
// counts a try while it runs and frees its slot once it ended.
func TestSlotsCountRunningTries(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	reg := operator.NewRegistry()
	release, started := make(chan struct{}), make(chan struct{})
	_ = reg.Register("hold", func(context.Context, operator.TaskContext) (any, error) {
		close(started)
		<-release
		return nil, nil
	})
	env.SeedRun(t, core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "a", Operator: operator.Go, Args: map[string]any{"function": "hold"}}}}, "r1", "")
	var w *Worker
	startWorker(t, env, reg, func(x *Worker) { w = x })
	<-started
	if total, running := w.Slots(); total != 3 || running != 1 {
		t.Errorf("while the try runs: %d slots, %d running; want 3 and 1", total, running)
	}
	close(release)
	wait.Until(t, 30*time.Second, "the try to finish", func() bool { return stateOf(t, env, "r1", "a") == core.TISuccess })
	wait.Until(t, 30*time.Second, "its slot to be free", func() bool { _, running := w.Slots(); return running == 0 })
}
