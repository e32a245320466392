package triggertest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
)

// Watcher is an in-memory trigger.Watcher: the assets a watcher trigger
// runs for, their cursors, and every batch committed, in order. Commits
// are checked as the triggerer checks them (an asset not watched is an
// error); Fail makes the next commits fail as a lost database would.
type Watcher struct {
	mu      sync.Mutex
	watched []trigger.Watched
	commits []trigger.Batch
	polls   []error
	fail    error
	changed chan struct{}
}

// NewWatcher watches assets (each with no cursor yet) under watcher name.
func NewWatcher(name string, assets ...trigger.AssetInfo) *Watcher {
	w := &Watcher{changed: make(chan struct{}, 1)}
	for _, a := range assets {
		w.watched = append(w.watched, trigger.Watched{Asset: a, Watcher: name})
	}
	return w
}

// Start runs tr as a watcher with w in the background (see Start).
func (w *Watcher) Start(t testing.TB, tr trigger.Trigger, rt *trigger.Runtime) *Run {
	t.Helper()
	if rt == nil {
		rt = &trigger.Runtime{}
	}
	rt.Watcher = w
	rt.EmitFunc = func(ctx context.Context, e trigger.Event) error {
		return w.Commit(ctx, trigger.Batch{Events: []trigger.WatchEvent{{Payload: e.Payload}}})
	}
	return Start(t, tr, rt)
}

// Watched returns the assets with their cursors.
func (w *Watcher) Watched() []trigger.Watched {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]trigger.Watched(nil), w.watched...)
}

// Commit records b and moves the cursors, or returns the error set by Fail.
func (w *Watcher) Commit(_ context.Context, b trigger.Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return w.fail
	}
	for _, e := range b.Events {
		if e.Asset != "" && w.find(e.Asset) < 0 {
			return fmt.Errorf("asset %q is not watched: %w", e.Asset, core.ErrInvalid)
		}
	}
	for name, c := range b.Cursors {
		i := w.find(name)
		if i < 0 {
			return fmt.Errorf("cursor of asset %q, which is not watched: %w", name, core.ErrInvalid)
		}
		w.watched[i].Cursor = c
	}
	w.commits = append(w.commits, b)
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return nil
}

func (w *Watcher) find(name string) int {
	for i := range w.watched {
		if w.watched[i].Asset.Name == name {
			return i
		}
	}
	return -1
}

// Polled records each poll's outcome.
func (w *Watcher) Polled(_ time.Time, _ time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls = append(w.polls, err)
}

// Fail makes later commits fail with err (nil: succeed again).
func (w *Watcher) Fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fail = err
}

// SetCursor sets asset's cursor, as an admin would.
func (w *Watcher) SetCursor(asset string, cursor json.RawMessage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i := w.find(asset); i >= 0 {
		w.watched[i].Cursor = cursor
	}
}

// Cursor returns asset's committed cursor.
func (w *Watcher) Cursor(asset string) json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i := w.find(asset); i >= 0 {
		return w.watched[i].Cursor
	}
	return nil
}

// Events returns every committed event of asset (those naming it and those
// naming no asset), in commit order.
func (w *Watcher) Events(asset string) []trigger.WatchEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []trigger.WatchEvent
	for _, b := range w.commits {
		for _, e := range b.Events {
			if e.Asset == "" || e.Asset == asset {
				out = append(out, e)
			}
		}
	}
	return out
}

// Commits returns the batches committed so far.
func (w *Watcher) Commits() []trigger.Batch {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]trigger.Batch(nil), w.commits...)
}

// PollErrors returns the errors of the polls that failed, in order.
func (w *Watcher) PollErrors() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []error
	for _, err := range w.polls {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// WaitEvents waits until asset has at least n events and returns them,
// failing t after Bound.
func (w *Watcher) WaitEvents(t testing.TB, asset string, n int) []trigger.WatchEvent {
	t.Helper()
	deadline := time.After(Bound)
	for {
		if evs := w.Events(asset); len(evs) >= n {
			return evs
		}
		select {
		case <-w.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("asset %s has %d events after %s, want %d", asset, len(w.Events(asset)), Bound, n)
		}
	}
}
