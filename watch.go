package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
)

// AssetWatcher adds a watcher to an asset: its trigger runs continuously
// in the triggerer and records an event of the asset for each new thing it
// finds, committing its cursor with the events (docs/watchers.md). name is
// unique among the asset's watchers and keys its cursor; the trigger's type
// must be one that can watch (a built-in such as "directory", or one made
// with PollWatcher).
func AssetWatcher(name string, trig TriggerSpec) AssetOption {
	return func(a *core.Asset) {
		a.Watchers = append(a.Watchers, core.AssetWatcher{Name: name, Trigger: trig})
	}
}

type (
	// WatchedAsset is the asset a watcher polls for: its name, uri and
	// extra.
	WatchedAsset = trigger.AssetInfo
	// WatchEvent is one thing a watcher found: Payload becomes the asset
	// event's extra (an object; another value is kept as {"payload": v}),
	// with an optional PartitionKey. Asset is left empty by a PollWatcher
	// function (the event is its asset's).
	WatchEvent = trigger.WatchEvent
)

// PollFunc is a watcher as one function: given its kwargs, the asset and
// the cursor committed last (nil at first), it returns what is new since
// the cursor and the new cursor (nil = unchanged). The events and the new
// cursor commit together; an error is retried with back-off and shown in
// the watcher's health.
type PollFunc[K any] func(ctx context.Context, kwargs K, asset WatchedAsset, cursor json.RawMessage) ([]WatchEvent, json.RawMessage, error)

// PollWatcher makes a watcher trigger type from poll: kwargs are decoded
// strictly into K when a DAG is loaded (an unknown or mistyped kwarg is an
// import error naming it), except poll_interval (a duration such as "30s",
// default 5s) which the framework uses: it polls with jitter, backs off on
// errors and commits each poll's events with its cursor. Register the type
// with RegisterTrigger; watchers with equal kwargs on several assets share
// one loop that calls poll for each asset.
func PollWatcher[K any](name, summary string, poll PollFunc[K]) TriggerType {
	return TriggerType{Name: name, Summary: summary, Uses: trigger.UseWatcher,
		New: func(raw json.RawMessage) (trigger.Trigger, error) {
			var all map[string]json.RawMessage
			if err := trigger.DecodeKwargs(raw, &all); err != nil {
				return nil, err
			}
			var every *string
			if v, ok := all["poll_interval"]; ok {
				if err := json.Unmarshal(v, &every); err != nil {
					return nil, trigger.Invalid("poll_interval", "must be a duration such as \"30s\"")
				}
				delete(all, "poll_interval")
			}
			interval, err := trigger.Interval("poll_interval", every, trigger.DefaultPollInterval)
			if err != nil {
				return nil, err
			}
			rest, _ := json.Marshal(all)
			var k K
			if err := trigger.DecodeKwargs(bytes.TrimSpace(rest), &k); err != nil {
				return nil, err
			}
			return pollWatcher[K]{kwargs: k, interval: interval, poll: poll}, nil
		}}
}

// pollWatcher is a built PollWatcher trigger.
type pollWatcher[K any] struct {
	kwargs   K
	interval time.Duration
	poll     PollFunc[K]
}

func (p pollWatcher[K]) Run(ctx context.Context, rt *trigger.Runtime) error {
	return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: p.interval},
		trigger.PerAsset(func(ctx context.Context, a trigger.AssetInfo, cursor json.RawMessage) ([]trigger.WatchEvent, json.RawMessage, error) {
			return p.poll(ctx, p.kwargs, a, cursor)
		}))
}

// Where a TriggerType may run (TriggerType.Uses; zero = UseDeferral).
const (
	UseDeferral = trigger.UseDeferral // a deferred task or sensor waits on it; the first event resumes it
	UseWatcher  = trigger.UseWatcher  // an asset watcher: it runs until cancelled, committing cursors with events
	UseStream   = trigger.UseStream   // its run produces a stream: every event is an envelope (docs/streaming.md)
)

type (
	// Watched is one asset a watcher trigger runs for, with its watcher's
	// name and committed cursor.
	Watched = trigger.Watched
	// WatchBatch is what one poll commits, all or nothing: events (each
	// naming its asset, or none for every watched asset) and new cursors
	// by asset name.
	WatchBatch = trigger.Batch
)

// WatchLoop runs poll over every asset the watcher trigger runs for (a
// read of the source shared by all of them) until ctx ends, committing each
// batch, with interval and jitter between polls and back-off after errors:
// the Run of a TriggerType with Uses UseWatcher.
func WatchLoop(ctx context.Context, rt *TriggerRuntime, interval time.Duration,
	poll func(ctx context.Context, watched []Watched) (WatchBatch, error)) error {
	return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: interval}, poll)
}
