package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/store"
)

// BenchmarkWorkerGoNoop measures whole tries of a Go no-op task run by a
// Worker over loopback HTTP on SQLite: claim, run, heartbeat-free finish,
// log shipping.
func BenchmarkWorkerGoNoop(b *testing.B) {
	env := execapitest.New(b, execapi.Config{})
	reg := operator.NewRegistry()
	_ = reg.Register("noop", func(context.Context, operator.TaskContext) (any, error) { return nil, nil })
	dag := core.DAG{DagID: "d"}
	for i := range b.N {
		dag.Tasks = append(dag.Tasks, core.Task{TaskID: fmt.Sprintf("t%d", i), Operator: operator.Go, Args: map[string]any{"function": "noop"}})
	}
	run, _ := env.SeedRun(b, dag, "r1", core.TIScheduled)
	w := &Worker{Client: env.WorkerClient(b, "w1"), WorkerID: "w1", Concurrency: 8, Registry: reg, LogFolder: b.TempDir(),
		HeartbeatInterval: time.Minute, Clock: env.Clock}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	wake := env.Store.Subscribe(ctx, store.ChannelTasks) // tries ended
	b.ResetTimer()
	go func() { errc <- w.Start(ctx) }()
	if _, err := env.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{To: core.TIQueued, From: []core.TIState{core.TIScheduled},
		IDs: ids(b, env, run.ID), Now: env.Clock.Now()}); err != nil {
		b.Fatal(err)
	}
	_ = env.Store.Notify(ctx, store.ChannelQueued)
	for {
		tis, err := env.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, States: []core.TIState{core.TISuccess}})
		if err != nil {
			b.Fatal(err)
		}
		if len(tis) == b.N {
			break
		}
		<-wake
	}
	b.StopTimer()
	cancel()
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

func ids(b *testing.B, env *execapitest.Env, runID int64) []string {
	tis, err := env.Store.TaskInstanceList(context.Background(), &store.TaskInstanceListParams{DagRunID: runID})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]string, len(tis))
	for i, ti := range tis {
		out[i] = ti.ID
	}
	return out
}
