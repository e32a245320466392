package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/trigger"
)

// Sensor is the operator of tasks that wait on a trigger (docs/triggers.md).
const Sensor = "sensor"

// errSensorDone stops a poke sensor's trigger after its first event.
var errSensorDone = errors.New("sensor: the trigger fired")

// errSensorTimeout stops a poke sensor's trigger at the sensor's timeout.
var errSensorTimeout = errors.New("sensor: timed out")

// SensorTimedOut is how a sensor's try ends when its timeout passed
// without an event (cause says how): Airflow's AirflowSensorTimeout, a
// failure without retries whatever tries are left, or with the task's
// soft_fail a skip. Both of a deferrable sensor's and a poke sensor's
// timeouts end this way.
func SensorTimedOut(task *core.Task, cause error) (core.TIState, error) {
	if task.SoftFail() {
		return core.TISkipped, fmt.Errorf("%w (soft_fail: the sensor is skipped)", cause)
	}
	return core.TIFailed, NoRetry(fmt.Errorf("%w (a sensor's timeout fails it without retries; soft_fail: true skips it instead)", cause))
}

// runSensor ends a sensor's try. A deferrable sensor started in the
// triggerer and runs on a worker only once its trigger fired: the event's
// payload becomes its return value. A poke sensor runs its trigger here,
// in the try, until the first event, its timeout (SensorTimedOut) or its
// execution timeout (a failure retried as any, or with soft_fail a skip,
// as Airflow's poke loop makes an AirflowTaskTimeout).
func (r *Runner) runSensor(ctx context.Context, req *Request) (*Result, error) {
	if req.Resume != nil && req.Task.HandlesStream() {
		return r.handleStream(ctx, req)
	}
	if req.Resume != nil {
		req.logf("the trigger fired: %s", truncate(string(req.Resume.Event), 500))
		return &Result{ReturnValue: req.Resume.Event}, nil
	}
	// The trigger as the sensor's rendered args hold it (dagfile.BuildSensor's poke form).
	spec, ok := dagfile.SensorTrigger(&core.Task{Args: req.Args})
	if !ok {
		return nil, fmt.Errorf("sensor %s has no trigger to poke: %w", req.Task.TaskID, core.ErrInvalid)
	}
	typ := spec.Type
	if r.Triggers == nil {
		return nil, fmt.Errorf("this worker has no trigger types to poke %s with", typ)
	}
	tr, err := r.Triggers.New(spec)
	if err != nil {
		return nil, err
	}
	created := time.Now()
	if req.TI.StartDate != nil {
		created = *req.TI.StartDate
	}
	pokeCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	timeout, _ := time.ParseDuration(fmt.Sprint(req.Args["timeout"]))
	if timeout > 0 {
		var cancel context.CancelFunc
		pokeCtx, cancel = context.WithTimeoutCause(pokeCtx, timeout, errSensorTimeout)
		defer cancel()
	}
	var (
		mu    sync.Mutex
		event json.RawMessage
	)
	rt := &trigger.Runtime{CreatedAt: created, Log: req.Log,
		Connections: Chain(r.Connections, req.Connections),
		EmitFunc: func(_ context.Context, e trigger.Event) error {
			mu.Lock()
			defer mu.Unlock()
			if event == nil {
				event = e.Payload
			}
			stop(errSensorDone)
			return nil
		}}
	req.logf("poking a %s trigger", typ)
	err = tr.Run(pokeCtx, rt)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case event != nil:
		req.logf("the trigger fired: %s", truncate(string(event), 500))
		return &Result{ReturnValue: event}, nil
	case errors.Is(context.Cause(pokeCtx), errSensorTimeout):
		state, err := SensorTimedOut(&req.Task, fmt.Errorf("the %s trigger did not fire within the sensor's timeout (%s)", typ, timeout))
		if state == core.TISkipped {
			req.logf("%v", err)
			return nil, fmt.Errorf("%w: %w", ErrSkipped, err)
		}
		return nil, err
	case errors.Is(context.Cause(ctx), ErrTimeout):
		err := fmt.Errorf("sensor stopped: %w", ErrTimeout)
		if req.Task.SoftFail() {
			req.logf("%v (soft_fail: the sensor is skipped)", err)
			return nil, fmt.Errorf("%w: %w", ErrSkipped, err)
		}
		return nil, err
	case ctx.Err() != nil:
		return nil, fmt.Errorf("sensor stopped: %w", cancelled(ctx))
	case err != nil:
		return nil, fmt.Errorf("the %s trigger failed: %w", typ, err)
	default:
		return nil, fmt.Errorf("the %s trigger ended without an event", typ)
	}
}
