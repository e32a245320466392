package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// GoFunc is a task implemented in Go. Its return value (when not nil) becomes
// the return_value XCom; an error (or a panic) fails the try; ErrSkipped
// (wrapped) skips it.
type GoFunc func(ctx context.Context, tc TaskContext) (any, error)

// Registry holds Go task functions by name. It is safe for concurrent use;
// the SDK registers functions before the worker starts.
type Registry struct {
	mu      sync.RWMutex
	funcs   map[string]GoFunc
	batches map[string]bool // the batch stream handlers among funcs
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{funcs: map[string]GoFunc{}} }

// Register adds fn under name; a name registers once.
func (r *Registry) Register(name string, fn GoFunc) error {
	if name == "" || fn == nil {
		return fmt.Errorf("register go task: name and function are required: %w", core.ErrInvalid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.funcs[name]; dup {
		return fmt.Errorf("go task function %q is already registered: %w", name, core.ErrConflict)
	}
	r.funcs[name] = fn
	return nil
}

// Lookup returns the function registered under name.
func (r *Registry) Lookup(name string) (GoFunc, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	fn, ok := r.funcs[name]
	return fn, ok
}

// Names lists the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.funcs))
	for n := range r.funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TaskContext is what a Go task sees of its try.
type TaskContext struct {
	DagID     string
	RunID     string
	TaskID    string
	MapIndex  int
	TryNumber int
	Params    map[string]any // DAG params overridden by the run's conf
	MapArgs   map[string]any // a mapped instance's expanded arguments
	Args      map[string]any // the task's rendered arguments
	Logger    *slog.Logger   // writes to the task log
	Log       io.Writer      // the task log itself
	// Resume is set when the try resumes after a deferral (nil on its
	// first step).
	Resume *Resume
	// AssetEvents are the asset events that created the run (nil unless
	// it is asset-triggered).
	AssetEvents []core.AssetEvent
	// PartitionKey is the partition the run is for ("" = none).
	PartitionKey string
	// CheckDeferral validates a deferral before the task returns it (nil
	// = accept any; the server checks again).
	checkDeferral func(core.Deferral) error
	xcom          XCom
	state         State
	callback      CallbackContext // set when a Go callback runs through callGo
}

// CheckDeferral validates d against the worker's trigger types.
func (tc TaskContext) CheckDeferral(d core.Deferral) error {
	if tc.checkDeferral == nil {
		return nil
	}
	return tc.checkDeferral(d)
}

// XComPush stores value under key for this try.
func (tc TaskContext) XComPush(ctx context.Context, key string, value any) error {
	if tc.xcom == nil {
		return fmt.Errorf("xcom push %q: no Execution API client", key)
	}
	return tc.xcom.XComPush(ctx, key, value)
}

// XComPull decodes into out the XCom key ("" = return_value) of taskID
// (mapIndex -1 when unmapped) in this DAG run.
func (tc TaskContext) XComPull(ctx context.Context, taskID, key string, mapIndex int, out any) error {
	if tc.xcom == nil {
		return fmt.Errorf("xcom pull %s/%s: no Execution API client", taskID, key)
	}
	raw, err := tc.xcom.XComPull(ctx, taskID, key, mapIndex)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode XCom %s/%s: %w", taskID, key, err)
	}
	return nil
}

// ResumeFunctionName is the name a Go task's resume method is registered
// under: the task function's name, "#", the method.
func ResumeFunctionName(function, method string) string { return function + "#" + method }

// runGo runs the registered function named by the "function" argument
// in-process, turning a panic into a failed try.
func (r *Runner) runGo(ctx context.Context, req *Request) (*Result, error) {
	name, err := stringArg(req.Args, "function", true)
	if err != nil {
		return nil, err
	}
	if req.Resume != nil && req.Resume.Method != "" {
		name = ResumeFunctionName(name, req.Resume.Method)
	}
	fn, ok := r.Registry.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("go task function %q is not registered in this worker: %w", name, core.ErrNotFound)
	}
	v, err := r.callGo(ctx, req, name, fn, r.goContext(req))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("go task %s: %w (%w)", name, err, cancelled(ctx))
		}
		return nil, fmt.Errorf("go task %s: %w", name, err)
	}
	if v == nil {
		return &Result{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("go task %s: return value is not JSON-encodable: %w", name, err)
	}
	return &Result{ReturnValue: b}, nil
}

// goContext is what a Go function called for req sees of its try.
func (r *Runner) goContext(req *Request) TaskContext {
	ti := req.TI
	logger := slog.New(slog.NewTextHandler(req.Log, nil)).With("dag_id", ti.DagID, "run_id", ti.RunID,
		"task_id", ti.TaskID, "map_index", ti.MapIndex, "try", ti.TryNumber)
	return TaskContext{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex, TryNumber: ti.TryNumber,
		Params: req.Params, MapArgs: req.MapArgs, Args: req.Args, Logger: logger, Log: req.Log, xcom: req.XCom,
		state: stateOf(req), Resume: req.Resume, AssetEvents: req.AssetEvents, PartitionKey: req.PartitionKey,
		checkDeferral: r.checkDeferral}
}

// callGo calls fn on its own goroutine, turning a panic into an error. When
// ctx ends and fn does not return within KillGrace, the try fails and fn is
// abandoned (a Go function cannot be killed).
func (r *Runner) callGo(ctx context.Context, req *Request, name string, fn GoFunc, tc TaskContext) (any, error) {
	type outcome struct {
		v   any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				req.logf("panic in go task %s: %v\n%s", name, p, debug.Stack())
				done <- outcome{err: fmt.Errorf("go task %s panicked: %v", name, p)}
			}
		}()
		v, err := fn(ctx, tc)
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(r.killGrace())
	defer t.Stop()
	select {
	case o := <-done:
		return o.v, o.err
	case <-t.C:
		req.logf("go task %s ignored cancellation; abandoning it", name)
		return nil, fmt.Errorf("go task %s abandoned: %w", name, cancelled(ctx))
	}
}
