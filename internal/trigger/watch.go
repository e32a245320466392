package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Watched is one asset a watcher trigger runs for (docs/watchers.md):
// the asset, the watcher's name and the cursor last committed for it.
type Watched struct {
	Asset   AssetInfo
	Watcher string
	// Cursor is the committed cursor, nil before the first one.
	Cursor json.RawMessage
}

// AssetInfo is what a watcher knows of its asset.
type AssetInfo struct {
	Name  string         `json:"name"`
	URI   string         `json:"uri"`
	Extra map[string]any `json:"extra,omitempty"`
}

// WatchEvent is one thing a watcher found: an event of the asset Asset
// names (a watched asset's name; "" = every watched asset) whose extra is
// Payload (a JSON object; any other value is recorded as {"payload": v}).
type WatchEvent struct {
	Asset        string
	Payload      any
	PartitionKey string // "" = none
}

// Batch is what one poll commits, all or nothing: its events, the new
// cursor of each asset named in Cursors (by asset name), and other keys of
// the assets' state (State: asset name → key → value; a nil value deletes
// the key), written as the watcher's. A batch with cursors and no events
// moves the watermark; an empty batch is a no-op.
type Batch struct {
	Events  []WatchEvent
	Cursors map[string]json.RawMessage
	State   map[string]map[string]json.RawMessage
}

// Empty reports whether b commits nothing.
func (b *Batch) Empty() bool { return len(b.Events) == 0 && len(b.Cursors) == 0 && len(b.State) == 0 }

// Watcher is the part of a Runtime a watcher trigger uses; the triggerer
// sets it for a trigger that runs asset watchers (nil for a deferral's).
type Watcher interface {
	// Watched returns the assets the trigger runs for, with their
	// committed cursors (the list can change between calls: a DAG added a
	// watcher with the same trigger, or an admin set a cursor).
	Watched() []Watched
	// Commit records b's events and cursors in one transaction and returns
	// once committed. An error wrapping core.ErrConflict means nothing was
	// written because a cursor changed since Watched returned it (an
	// admin's edit wins) or the trigger moved to another triggerer (then
	// ctx ends too): poll again from Watched.
	Commit(ctx context.Context, b Batch) error
	// Polled records the outcome of one poll in the watchers' health
	// (err nil = it succeeded).
	Polled(start time.Time, took time.Duration, err error)
	// ReadState returns key of the state of the watched asset named asset
	// (nil when absent); keys are written with a Batch's State.
	ReadState(ctx context.Context, asset, key string) (json.RawMessage, error)
}

// ErrNotWatching is returned by Runtime.Watch helpers for a trigger that
// does not run as a watcher.
var ErrNotWatching = errors.New("this trigger type runs only as an asset watcher (declare it in an asset's watchers)")

// PollFunc is one poll of a watcher over every asset it runs for: what is
// new since each asset's cursor, as a batch.
type PollFunc func(ctx context.Context, watched []Watched) (Batch, error)

// AssetPollFunc is one poll for one asset: the events found since cursor
// (nil before the first poll) and the new cursor (nil = unchanged).
type AssetPollFunc func(ctx context.Context, asset AssetInfo, cursor json.RawMessage) ([]WatchEvent, json.RawMessage, error)

// PerAsset turns a poll of one asset into a poll of every watched asset,
// one after the other; each event goes to the asset it was found for.
func PerAsset(poll AssetPollFunc) PollFunc {
	return func(ctx context.Context, watched []Watched) (Batch, error) {
		var b Batch
		for _, w := range watched {
			events, next, err := poll(ctx, w.Asset, w.Cursor)
			if err != nil {
				return Batch{}, fmt.Errorf("asset %s: %w", w.Asset.Name, err)
			}
			for _, e := range events {
				e.Asset = w.Asset.Name
				b.Events = append(b.Events, e)
			}
			if next != nil {
				if b.Cursors == nil {
					b.Cursors = map[string]json.RawMessage{}
				}
				b.Cursors[w.Asset.Name] = next
			}
		}
		return b, nil
	}
}

// WatchOptions tune Watch.
type WatchOptions struct {
	// Interval is the time between polls (DefaultPollInterval when 0);
	// each wait varies by up to ±Jitter of it (0.1 when 0) so that many
	// watchers do not poll in step.
	Interval time.Duration
	Jitter   float64
	// MaxBackoff bounds the wait after failed polls, which doubles from
	// Interval with each failure in a row (DefaultMaxBackoff when 0).
	MaxBackoff time.Duration
}

// DefaultMaxBackoff bounds the wait between failing polls.
const DefaultMaxBackoff = 5 * time.Minute

// Watch runs poll until ctx ends: each poll sees the committed cursors, and
// what it returns is committed before the next one. A failed poll (or
// commit) is recorded in the watchers' health and the trigger log, and
// retried with exponential back-off; a Permanent error ends the trigger.
// It returns ErrNotWatching when rt is not a watcher's.
func Watch(ctx context.Context, rt *Runtime, opt WatchOptions, poll PollFunc) error {
	if rt.Watcher == nil {
		return ErrNotWatching
	}
	if opt.Interval <= 0 {
		opt.Interval = DefaultPollInterval
	}
	if opt.Jitter <= 0 {
		opt.Jitter = 0.1
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = DefaultMaxBackoff
	}
	failures := 0
	var lastErr string
	for {
		start := time.Now()
		b, err := poll(ctx, rt.Watcher.Watched())
		if err == nil && !b.Empty() {
			err = rt.Watcher.Commit(ctx, b)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rt.Watcher.Polled(start, time.Since(start), err)
		wait := opt.Interval
		switch {
		case err != nil && errors.As(err, new(permanentError)):
			return err
		case err != nil:
			failures++
			wait = backoff(opt.Interval, opt.MaxBackoff, failures)
			if msg := err.Error(); msg != lastErr || failures%10 == 0 {
				rt.Logf("poll failed (%d in a row; next in %s): %v", failures, wait.Round(time.Millisecond), err)
				lastErr = msg
			}
		default:
			if failures > 0 {
				rt.Logf("poll succeeded after %d failures", failures)
			}
			failures, lastErr = 0, ""
		}
		if err := Sleep(ctx, jitter(wait, opt.Jitter)); err != nil {
			return err
		}
	}
}

// backoff is interval doubled per failure in a row, at most limit.
func backoff(interval, limit time.Duration, failures int) time.Duration {
	d := interval
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, max(limit, interval))
}

// jitter varies d by up to ±frac of it.
func jitter(d time.Duration, frac float64) time.Duration {
	return time.Duration(float64(d) * (1 + frac*(2*rand.Float64()-1))) //nolint:gosec // poll spacing, not a secret
}

// EventExtra is the extra of the asset event a watcher's payload becomes:
// the payload itself when it is a JSON object, else {"payload": payload}.
func EventExtra(payload any) (json.RawMessage, error) {
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return nil, fmt.Errorf("encode watcher event: %w", err)
		}
	}
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if len(raw) > 0 && raw[0] == '{' {
		return raw, nil
	}
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	return json.Marshal(map[string]json.RawMessage{"payload": raw})
}
