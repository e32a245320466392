package operator

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/weirflow/weir/internal/core"
)

// CallbackFunc is a callback written in Go (the SDK's weir.OnFailure(fn),
// ...; docs/go-sdk.md#callbacks). An error or a panic fails the callback,
// never the outcome that fired it.
type CallbackFunc func(ctx context.Context, cc CallbackContext) error

// CallbackContext is what a Go callback sees of its attempt: the callback
// (what fired it, whose it is), the run, the DAG's params overridden by
// the run's conf, a logger and writer on the callback's log, and emission
// of its outlets' events.
type CallbackContext struct {
	Callback core.Callback // Attempts is this attempt
	Run      core.DagRun
	Params   map[string]any
	Logger   *slog.Logger
	Log      io.Writer
	// Emitter emits the events of the callback's outlets (nil: every
	// emission fails with ErrNoTry).
	Emitter Emitter
}

// RegisterCallback adds the Go callback fn under name; a name registers
// once.
func (r *Registry) RegisterCallback(name string, fn CallbackFunc) error {
	if name == "" || fn == nil {
		return fmt.Errorf("register go callback: name and function are required: %w", core.ErrInvalid)
	}
	return r.Register(callbackKey(name), func(ctx context.Context, tc TaskContext) (any, error) {
		return nil, fn(ctx, tc.callback)
	})
}

// callbackKey keeps callbacks apart from task functions in the registry.
func callbackKey(name string) string { return "callback:" + name }

// RunCallback calls the Go callback registered under name with cc, on its
// own goroutine as a Go task's function (a panic fails it; when ctx ends
// and it does not return within KillGrace it is abandoned).
func (r *Runner) RunCallback(ctx context.Context, name string, cc CallbackContext) error {
	fn, ok := r.Registry.Lookup(callbackKey(name))
	if !ok {
		return fmt.Errorf("go callback %q is not registered in this worker (run the program that defines its DAG as the worker): %w", name, core.ErrNotFound)
	}
	_, err := r.callGo(ctx, &Request{Log: cc.Log}, "callback "+name, fn, TaskContext{callback: cc})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", err, cancelled(ctx))
	}
	return err
}
