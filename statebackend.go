package weir

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/stateref"
)

// StateBackend keeps the values of task state and asset state somewhere
// of the program's choosing (docs/state-backends.md#custom-backends-in-go):
// the worker hands every value to Serialize under a reference Weir issues,
// Weir's database keeps only the reference (with the key's retention and
// who wrote it), and Deserialize gives the value back on a get. Cleanup is
// called by the worker's sweep for each reference whose database row went,
// by whatever path (a delete or clear by the task or an admin, retention
// cleanup, clear_on_success, clearing a task for a re-run, a deleted run or
// asset, an overwrite, a write that never stored its reference).
//
// A reference looks like task/<dag>/<run>/<task>/<map_index>/<key>/<id> or
// asset/<name>/<key>/<id>: each component is escaped into one path segment
// of ASCII letters, digits and "_-.%~", and the id is never issued twice,
// so it can name a file or an object as it is. Register a backend with
// WithStateBackend and select it with [state_store] backend = "name";
// every worker of the deployment must run a program that registers it.
// Implementations are called from several goroutines (and, for bash tasks'
// `weir task-state`, from the task's own process) at once.
type StateBackend interface {
	// Serialize keeps value, the JSON of a checked value, under ref.
	Serialize(ctx context.Context, ref string, value []byte) error
	// Deserialize returns the value kept under ref, or an error wrapping
	// ErrNotFound when there is none (the get then fails naming the
	// reference; it never reads as an absent key).
	Deserialize(ctx context.Context, ref string) ([]byte, error)
	// Cleanup removes what Serialize kept under ref; nothing kept is not
	// an error. An error leaves the reference to a later sweep.
	Cleanup(ctx context.Context, ref string) error
}

// Option configures the program MainWith runs beyond its DAGs.
type Option func(*mainOptions)

// mainOptions is what the Options of MainWith collect.
type mainOptions struct {
	backends stateref.Registry
	errs     []error
}

// WithStateBackend registers b as the custom state backend name, which
// [state_store] backend (or [workers] state_backend) may select. A name
// of the wrong form (a letter, then letters, digits, "_", "-" or "."),
// "metastore", a name given twice or a nil backend stops MainWith with
// ExitInvalid before anything runs.
func WithStateBackend(name string, b StateBackend) Option {
	return func(o *mainOptions) {
		switch err := config.CheckStateBackendName(name); {
		case err != nil:
			o.errs = append(o.errs, fmt.Errorf("weir.WithStateBackend: %w", err))
		case b == nil:
			o.errs = append(o.errs, fmt.Errorf("weir.WithStateBackend(%q): the backend is nil", name))
		case o.backends[name] != nil:
			o.errs = append(o.errs, fmt.Errorf("weir.WithStateBackend(%q): registered twice", name))
		default:
			if o.backends == nil {
				o.backends = stateref.Registry{}
			}
			o.backends[name] = backendObjects{name: name, b: b}
		}
	}
}

// collect applies opts.
func collect(opts []Option) (*mainOptions, error) {
	o := &mainOptions{}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o, errors.Join(o.errs...)
}

// backendObjects adapts a StateBackend to the worker-side backend's object
// side: a put serializes, a get deserializes, the sweep's delete cleans up.
type backendObjects struct {
	name string
	b    StateBackend
}

// Put serializes data under ref.
func (o backendObjects) Put(ctx context.Context, ref string, data []byte) error {
	return o.b.Serialize(ctx, ref, data)
}

// Get deserializes the value under ref.
func (o backendObjects) Get(ctx context.Context, ref string) ([]byte, error) {
	return o.b.Deserialize(ctx, ref)
}

// Delete cleans up what ref holds.
func (o backendObjects) Delete(ctx context.Context, ref string) error {
	return o.b.Cleanup(ctx, ref)
}

// String names the backend in messages.
func (o backendObjects) String() string { return fmt.Sprintf("custom state backend %q", o.name) }
