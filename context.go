package weir

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
)

// TaskContext is what a Go task sees of its try: ids, the run's params, a
// logger writing to the task log, and XCom and task state (TaskState) through
// the Execution API.
type TaskContext struct {
	DagID     string
	RunID     string
	TaskID    string
	MapIndex  int            // -1 unless the task is mapped
	TryNumber int            // 1 on the first try
	Params    map[string]any // the DAG's params, overridden by the run's conf
	Logger    *slog.Logger   // writes to the task log, with dag_id, run_id, task_id, map_index, try
	Log       io.Writer      // the task log itself

	mapArgs map[string]any
	args    map[string]any
	op      operator.TaskContext
	resumes []string // the task's OnResume methods, sorted
	stream  sync.Once
	pusher  *Stream // the try's stream, one for every call of Stream
}

func newTaskContext(tc operator.TaskContext, resumes []string) *TaskContext {
	return &TaskContext{DagID: tc.DagID, RunID: tc.RunID, TaskID: tc.TaskID, MapIndex: tc.MapIndex,
		TryNumber: tc.TryNumber, Params: tc.Params, Logger: tc.Logger, Log: tc.Log,
		mapArgs: tc.MapArgs, args: tc.Args, op: tc, resumes: resumes}
}

// adapt turns a TaskFunc of a task whose OnResume methods are resumes
// into the function the worker's registry runs.
func adapt(fn TaskFunc, resumes []string) operator.GoFunc {
	return func(ctx context.Context, tc operator.TaskContext) (any, error) {
		return fn(ctx, newTaskContext(tc, resumes))
	}
}

// AssetEvent is an asset event as a task sees it (docs/assets.md).
type AssetEvent = core.AssetEvent

// TriggeringAssetEvents returns the asset events that created the run,
// oldest first: what an asset-triggered run was started for (each with its
// asset, extra, partition key and source, a watcher's included); nil for
// other runs. It holds at most the oldest 1,000: a run created from a larger
// burst reads the rest through the REST API (upstreamAssetEvents).
func (tc *TaskContext) TriggeringAssetEvents() []AssetEvent { return tc.op.AssetEvents }

// PartitionKey returns the partition the run is for: the key of the events
// that made a per-partition or per-event run (RunPerPartition,
// RunPerEvent), or the one given to a manual trigger; "" for none.
func (tc *TaskContext) PartitionKey() string { return tc.op.PartitionKey }

// Param returns the run's value of the DAG param name (nil when unset).
func (tc *TaskContext) Param(name string) any { return tc.Params[name] }

// XComPush stores value (encoded as JSON) under key for this task
// instance; downstream tasks read it with XComPullKey.
func (tc *TaskContext) XComPush(ctx context.Context, key string, value any) error {
	if err := tc.op.XComPush(ctx, key, value); err != nil {
		return fmt.Errorf("push XCom %q of task %s: %w", key, tc.TaskID, err)
	}
	return nil
}

// MapArg returns this mapped instance's value of the Expand argument name,
// decoded into T (a JSON number into an int, an object into a struct, ...).
func MapArg[T any](tc *TaskContext, name string) (T, error) {
	return lookup[T](tc.mapArgs, "mapped argument", name)
}

// OpKwarg returns the rendered OpKwargs entry name, decoded into T.
func OpKwarg[T any](tc *TaskContext, name string) (T, error) {
	kw, _ := tc.args["op_kwargs"].(map[string]any)
	return lookup[T](kw, "op_kwargs entry", name)
}

// ParamAs returns the run's value of the DAG param name decoded into T.
func ParamAs[T any](tc *TaskContext, name string) (T, error) {
	return lookup[T](tc.Params, "param", name)
}

// XComPull returns the return value of the (unmapped) task taskID in this
// DAG run, decoded into T.
func XComPull[T any](ctx context.Context, tc *TaskContext, taskID string) (T, error) {
	return XComPullMapped[T](ctx, tc, taskID, core.DefaultXComKey, core.NoMapIndex)
}

// XComPullAll returns what Airflow's xcom_pull(task_ids=taskID) gives:
// when taskID is mapped (Expand) or iterates over a stream, the return
// values its instances pushed as one list in map index order (T a slice;
// empty when none did), else its one return value.
func XComPullAll[T any](ctx context.Context, tc *TaskContext, taskID string) (T, error) {
	return XComPullMapped[T](ctx, tc, taskID, core.DefaultXComKey, execclient.AnyMapIndex)
}

// XComPullKey returns the XCom key of the (unmapped) task taskID in this
// DAG run, decoded into T.
func XComPullKey[T any](ctx context.Context, tc *TaskContext, taskID, key string) (T, error) {
	return XComPullMapped[T](ctx, tc, taskID, key, core.NoMapIndex)
}

// XComPullMapped returns the XCom key ("" = the return value) of one
// instance (mapIndex ≥ 0; -1 for an unmapped task) of taskID in this DAG
// run, decoded into T. A missing XCom is an error wrapping ErrNotFound.
func XComPullMapped[T any](ctx context.Context, tc *TaskContext, taskID, key string, mapIndex int) (T, error) {
	var out T
	if err := tc.op.XComPull(ctx, taskID, key, mapIndex, &out); err != nil {
		if key == "" {
			key = core.DefaultXComKey
		}
		if mapIndex == execclient.AnyMapIndex {
			return out, fmt.Errorf("pull XCom %q of task %s: %w", key, taskID, err)
		}
		return out, fmt.Errorf("pull XCom %q of task %s map_index %d: %w", key, taskID, mapIndex, err)
	}
	return out, nil
}

// lookup returns m[name] decoded into T; what names the kind of value for
// errors.
func lookup[T any](m map[string]any, what, name string) (T, error) {
	var out T
	v, ok := m[name]
	if !ok {
		return out, fmt.Errorf("no %s %q: %w", what, name, ErrNotFound)
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, fmt.Errorf("%s %q: cannot decode %v into %T: %w", what, name, v, out, err)
	}
	return out, nil
}
