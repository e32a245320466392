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

// runSensor ends a sensor's try. A deferrable sensor started in the
// triggerer and runs on a worker only once its trigger fired: the event's
// payload becomes its return value. A poke sensor runs its trigger here,
// in the try, until the first event (its execution timeout bounds the
// wait).
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
	case ctx.Err() != nil:
		return nil, fmt.Errorf("sensor stopped: %w", cancelled(ctx))
	case err != nil:
		return nil, fmt.Errorf("the %s trigger failed: %w", typ, err)
	default:
		return nil, fmt.Errorf("the %s trigger ended without an event", typ)
	}
}
