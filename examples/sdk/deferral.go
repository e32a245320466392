package main

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir"
)

// deferralDAG shows the ways a Go task waits without holding a worker slot
// (docs/go-sdk.md#deferral): each wait runs in the triggerer, and the try
// resumes on a worker when its trigger fires. The waits are short so that
// `dags test go_deferral` finishes in seconds.
func deferralDAG() *weir.DAG {
	dag := weir.NewDAG("go_deferral",
		weir.Description("Go tasks that defer on timers and resume: a named resume method, the task's own function again, a task that starts deferred, a sensor."),
		weir.Tags("example", "go", "deferral"))

	// A first step, a wait in the triggerer, then the "report" method with
	// the trigger's event and the kwargs the first step passed on.
	dag.Go("submit_then_report", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		tc.Logger.Info("submitted batch 7; waiting 2s in the triggerer")
		return nil, tc.Defer(weir.TimeDelta(2*time.Second), "report",
			weir.NextKwargs(map[string]any{"batch": 7}), weir.DeferTimeout(10*time.Minute))
	}, weir.OnResume("report", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		event, err := weir.TriggerEvent[struct {
			Moment time.Time `json:"moment"`
		}](tc)
		if err != nil {
			return nil, err
		}
		batch, err := weir.NextKwarg[int](tc, "batch")
		if err != nil {
			return nil, err
		}
		tc.Logger.Info("resumed", "batch", batch, "timer_fired_at", event.Moment)
		return map[string]any{"batch": batch, "resumed": true}, nil
	}))

	// Resume "" calls the task's own function again; tc.Resumed tells the
	// two calls apart.
	dag.Go("wait_once", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		if _, resumed := tc.Resumed(); resumed {
			return "resumed in the same function", nil
		}
		return nil, tc.Defer(weir.TimeDelta(time.Second), "")
	})

	// A task that starts deferred: no worker step until its trigger fires.
	dag.Go("start_after_timer", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		method, _ := tc.Resumed()
		return fmt.Sprintf("started from the trigger (resume method %q)", method), nil
	}, weir.StartFromTrigger(weir.TimeDelta(time.Second), ""))

	// A sensor (operator sensor, as in DAG files): its event is its XCom.
	cool := dag.Sensor("cool_down", weir.TimeDelta(time.Second), weir.SensorTimeout(time.Minute))
	dag.Go("after_cool_down", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		event, err := weir.XComPull[map[string]string](ctx, tc, "cool_down")
		if err != nil {
			return nil, err
		}
		return "cool_down fired at " + event["moment"], nil
	}, weir.DependsOn(cool))
	return dag
}
