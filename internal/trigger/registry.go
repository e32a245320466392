package trigger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/core"
)

// Registry holds trigger types by name. It is safe for concurrent use;
// types are registered before the processes that use them start.
type Registry struct {
	mu    sync.RWMutex
	types map[string]Type
}

// NewRegistry returns a registry holding types.
func NewRegistry(types ...Type) *Registry {
	r := &Registry{types: map[string]Type{}}
	for _, t := range types {
		if err := r.Register(t); err != nil {
			panic(err) // built-in lists are fixed at compile time
		}
	}
	return r
}

// Register adds t; a name registers once.
func (r *Registry) Register(t Type) error {
	if !validTypeName(t.Name) || t.New == nil {
		return fmt.Errorf("register trigger type %q: a name of letters, digits, '_', '.' or '-' and a New function are required: %w", t.Name, core.ErrInvalid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.types[t.Name]; dup {
		return fmt.Errorf("trigger type %q is already registered: %w", t.Name, core.ErrConflict)
	}
	r.types[t.Name] = t
	return nil
}

// Lookup returns the type registered under name.
func (r *Registry) Lookup(name string) (Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.types[name]
	return t, ok
}

// Types lists the registered types, sorted by name.
func (r *Registry) Types() []Type {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Type, 0, len(r.types))
	for _, t := range r.types {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Type) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// StreamTypes lists the names of the types that produce a stream
// (UseStream), sorted.
func (r *Registry) StreamTypes() []string {
	out := []string{}
	for _, t := range r.Types() {
		if t.Can(UseStream) {
			out = append(out, t.Name)
		}
	}
	return out
}

// New builds the trigger spec names; an unknown type or invalid kwargs
// give an error naming the problem (wrapping core.ErrInvalid).
func (r *Registry) New(spec Spec) (Trigger, error) {
	t, ok := r.Lookup(spec.Type)
	if !ok {
		names := make([]string, 0)
		for _, t := range r.Types() {
			names = append(names, t.Name)
		}
		return nil, fmt.Errorf("unknown trigger type %q (known: %s): %w", spec.Type, strings.Join(names, ", "), core.ErrInvalid)
	}
	kwargs := spec.Kwargs
	if len(kwargs) == 0 {
		kwargs = json.RawMessage("{}")
	}
	tr, err := t.New(kwargs)
	if err != nil {
		return nil, fmt.Errorf("trigger %s: %w", spec.Type, err)
	}
	return tr, nil
}

// CheckCursor validates raw as a cursor of a watcher of type name, as its
// polls would read it (Type.CheckCursor): an error wrapping core.ErrInvalid
// says why not. A type without a check, or unknown here (a Go SDK
// program's), accepts any value.
func (r *Registry) CheckCursor(name string, raw json.RawMessage) error {
	t, ok := r.Lookup(name)
	if !ok || t.CheckCursor == nil {
		return nil
	}
	if err := t.CheckCursor(raw); err != nil {
		return fmt.Errorf("%w: %w", err, core.ErrInvalid)
	}
	return nil
}

// Check validates spec without keeping the trigger.
func (r *Registry) Check(spec Spec) error {
	_, err := r.New(spec)
	return err
}

// CheckWatcher validates the trigger of an asset watcher: a type that can
// run as one (Type.Uses) and kwargs it accepts (no templates: a watcher
// runs outside any DAG run).
func (r *Registry) CheckWatcher(spec Spec) error { return r.checkFor(spec, UseWatcher) }

// CheckStream validates the trigger of a stream: a type that produces
// one (Type.Uses has UseStream) and kwargs it accepts.
func (r *Registry) CheckStream(spec Spec) error { return r.checkFor(spec, UseStream) }

// checkFor validates spec for use u: a type that may run for it, kwargs
// within the size bound, kwargs the type accepts.
func (r *Registry) checkFor(spec Spec, u Use) error {
	if err := r.checkUse(spec.Type, u); err != nil {
		return err
	}
	if len(spec.Kwargs) > maxDeferralBytes {
		return fmt.Errorf("trigger kwargs are %d bytes, more than the limit of %d: %w", len(spec.Kwargs), maxDeferralBytes, core.ErrInvalid)
	}
	return r.Check(spec)
}

// checkUse reports an error when type name may not run for u, or (for a
// watcher or a stream) is unknown; an unknown type for a deferral passes
// (Check names it among every type).
func (r *Registry) checkUse(name string, u Use) error {
	t, ok := r.Lookup(name)
	if ok && t.Can(u) {
		return nil
	}
	var can []string
	for _, o := range r.Types() {
		if o.Can(u) {
			can = append(can, o.Name)
		}
	}
	switch {
	case !ok && u == UseWatcher:
		return fmt.Errorf("unknown trigger type %q (types that watch: %s): %w", name, strings.Join(can, ", "), core.ErrInvalid)
	case !ok && u == UseStream:
		return fmt.Errorf("unknown trigger type %q (types that stream: %s): %w", name, strings.Join(can, ", "), core.ErrInvalid)
	case !ok:
		return nil // Check names it among every type
	case u == UseStream:
		return fmt.Errorf("trigger type %q does not produce a stream of events (types that stream: %s): %w",
			name, strings.Join(can, ", "), core.ErrInvalid)
	case u == UseWatcher:
		return fmt.Errorf("trigger type %q cannot watch an asset: it fires once, for a deferred task (types that watch: %s): %w",
			name, strings.Join(can, ", "), core.ErrInvalid)
	}
	return fmt.Errorf("trigger type %q runs only as an asset watcher, not for a deferred task or sensor (types that can: %s): %w",
		name, strings.Join(can, ", "), core.ErrInvalid)
}

// CheckLoaded validates the trigger of a task as a DAG defines it (a type
// that defers or streams), whose
// string kwargs may be templates rendered when each try starts (a start
// trigger's, a sensor's): when one is, only the type is checked here, and
// the rendered kwargs are checked when the try starts; otherwise it is
// Check.
func (r *Registry) CheckLoaded(spec Spec) error {
	// A sensor may wait on a streaming type: it produces a stream a task
	// may iterate over (docs/streaming.md).
	if err := r.checkUse(spec.Type, UseDeferral|UseStream); err != nil {
		return err
	}
	if !hasTemplate(spec.Kwargs) {
		return r.Check(spec)
	}
	if _, ok := r.Lookup(spec.Type); !ok {
		return r.Check(Spec{Type: spec.Type}) // the unknown-type error
	}
	return nil
}

// hasTemplate reports whether a string in the JSON value kwargs holds a
// template ("{{").
func hasTemplate(kwargs json.RawMessage) bool {
	var v any
	if !bytes.Contains(kwargs, []byte("{{")) || json.Unmarshal(kwargs, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return strings.Contains(x, "{{")
		case []any:
			return slices.ContainsFunc(x, walk)
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func validTypeName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		ok := c == '_' || c == '.' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// maxDeferralBytes bounds a deferral's kwargs and next_kwargs (each): they
// are stored in rows read on every resume.
const maxDeferralBytes = 64 << 10

// CheckDeferral validates a deferral without changing anything: a
// registered trigger type whose kwargs it accepts, a timeout that is not
// negative, next_kwargs that are a JSON object, sizes within bounds.
// Errors name the problem and wrap core.ErrInvalid.
func (r *Registry) CheckDeferral(d core.Deferral) error {
	switch {
	case d.Timeout < 0:
		return fmt.Errorf("timeout must not be negative, got %s: %w", d.Timeout.D(), core.ErrInvalid)
	case len(d.Trigger.Kwargs) > maxDeferralBytes:
		return fmt.Errorf("trigger kwargs are %d bytes, more than the limit of %d: %w", len(d.Trigger.Kwargs), maxDeferralBytes, core.ErrInvalid)
	case len(d.NextKwargs) > maxDeferralBytes:
		return fmt.Errorf("next_kwargs are %d bytes, more than the limit of %d: %w", len(d.NextKwargs), maxDeferralBytes, core.ErrInvalid)
	case len(d.NextMethod) > 200:
		return fmt.Errorf("next_method is longer than 200 bytes: %w", core.ErrInvalid)
	case d.NextMethod == core.NextMethodFail:
		return fmt.Errorf("next_method %q is reserved for failed deferrals: %w", core.NextMethodFail, core.ErrInvalid)
	}
	if len(d.NextKwargs) > 0 {
		if b := bytes.TrimSpace(d.NextKwargs); len(b) == 0 || b[0] != '{' || !json.Valid(b) {
			return fmt.Errorf("next_kwargs must be a JSON object: %w", core.ErrInvalid)
		}
	}
	if err := r.checkUse(d.Trigger.Type, UseDeferral); err != nil {
		return err
	}
	return r.Check(d.Trigger)
}
