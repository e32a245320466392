// Package triggertest runs triggers in tests: a run whose events arrive on
// a channel (so Emit blocks until the test takes each one, as a real
// commit would), whose log is kept, and a table check of kwargs refusals.
package triggertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
)

// Bound is how long a test waits for an event or for a run to return
// before failing: generous, as the test asserts what happens, not how fast.
const Bound = time.Minute

// New builds a trigger of typ from kwargs (JSON), failing t on an error.
func New(t testing.TB, typ trigger.Type, kwargs string) trigger.Trigger {
	t.Helper()
	tr, err := typ.New(json.RawMessage(kwargs))
	if err != nil {
		t.Fatalf("%s.New(%s): %v", typ.Name, kwargs, err)
	}
	return tr
}

// Run is one trigger running in the background.
type Run struct {
	events chan json.RawMessage
	done   chan error
	cancel context.CancelFunc
	log    *logLines
}

// Start runs tr with rt (nil: an empty one) whose Log and EmitFunc (unless
// set) it sets;
// the run is cancelled, and waited for, when t ends.
func Start(t testing.TB, tr trigger.Trigger, rt *trigger.Runtime) *Run {
	t.Helper()
	if rt == nil {
		rt = &trigger.Runtime{}
	}
	if rt.CreatedAt.IsZero() {
		rt.CreatedAt = time.Now()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{events: make(chan json.RawMessage), done: make(chan error, 1), cancel: cancel, log: &logLines{}}
	rt.Log = r.log
	if rt.EmitFunc == nil { // a Watcher's run commits its events instead
		rt.EmitFunc = func(ctx context.Context, e trigger.Event) error {
			select {
			case r.events <- e.Payload:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	go func() { r.done <- tr.Run(ctx, rt) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			_ = err // what the run returned is the test's to check, before now
		case <-time.After(Bound):
			t.Errorf("the trigger did not return within %s of being cancelled", Bound)
		}
	})
	return r
}

// Event waits for the next event and returns its payload, failing t when
// the run returns first or none comes within Bound.
func (r *Run) Event(t testing.TB) json.RawMessage {
	t.Helper()
	select {
	case p := <-r.events:
		return p
	case err := <-r.done:
		r.done <- err // Wait still sees it
		t.Fatalf("the trigger returned %v before emitting; log:\n%s", err, r.Log())
	case <-time.After(Bound):
		t.Fatalf("no event within %s; log:\n%s", Bound, r.Log())
	}
	return nil
}

// Wait waits for the run to return and gives its error.
func (r *Run) Wait(t testing.TB) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(Bound):
		t.Fatalf("the trigger did not return within %s; log:\n%s", Bound, r.Log())
	}
	return nil
}

// Cancel cancels the run and waits for it to return, failing t unless it
// returns the context's error.
func (r *Run) Cancel(t testing.TB) {
	t.Helper()
	r.cancel()
	if err := r.Wait(t); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled trigger returned %v, want context.Canceled", err)
	}
}

// Log is what the trigger wrote to its log so far.
func (r *Run) Log() string { return r.log.String() }

// logLines keeps what a trigger logs, safe for concurrent use.
type logLines struct {
	mu    sync.Mutex
	parts []string
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.parts = append(l.parts, string(p))
	l.mu.Unlock()
	return len(p), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.parts, "")
}

// Conns is a connection lookup over a map of conn_id to URI; an absent
// id is core.ErrNotFound.
type Conns map[string]string

// ConnectionURI returns id's URI.
func (c Conns) ConnectionURI(_ context.Context, id string) (string, error) {
	if u, ok := c[id]; ok {
		return u, nil
	}
	return "", fmt.Errorf("connection %q: %w", id, core.ErrNotFound)
}
