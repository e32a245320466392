package service

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/trigger"
)

// Bounds on what one watcher poll commits (docs/watchers.md#limits).
const (
	MaxWatchEventBytes    = 64 << 10 // one event's extra
	MaxWatchCursorBytes   = 64 << 10 // one cursor
	MaxWatchEventsPerPoll = 10000
)

// CommitWatch records what one poll of watcher trigger p.TriggerID found:
// its events (queued for their consumers) and cursors commit together
// behind the triggerer's hold on the trigger, or nothing does
// (store.WatcherCommit). Sizes are checked first (core.ErrInvalid, nothing
// written); the scheduler is woken when events were recorded.
func (s *Service) CommitWatch(ctx context.Context, p *store.WatcherCommitParams) (*store.WatcherCommitResult, error) {
	if err := checkWatch(p); err != nil {
		return nil, err // the triggerer names the trigger
	}
	p.Now = s.clock.Now()
	res, err := s.st.WatcherCommit(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(res.EventIDs) > 0 {
		s.notify(ctx, store.ChannelScheduler)
	}
	return res, nil
}

// checkWatch bounds a poll's commit.
func checkWatch(p *store.WatcherCommitParams) error {
	if len(p.Events) > MaxWatchEventsPerPoll {
		return fmt.Errorf("%d events in one poll, more than the limit of %d (commit in smaller batches): %w",
			len(p.Events), MaxWatchEventsPerPoll, core.ErrInvalid)
	}
	for i := range p.Events {
		e := &p.Events[i]
		if len(e.Extra) > MaxWatchEventBytes {
			return fmt.Errorf("an event of asset %d is %d bytes, more than the limit of %d: %w",
				e.AssetID, len(e.Extra), MaxWatchEventBytes, core.ErrInvalid)
		}
		if e.PartitionKey != nil { // the rule of every partition key: emission's, a run's
			if err := emission.CheckPartitionKey(*e.PartitionKey); err != nil {
				return fmt.Errorf("an event of asset %d: %w", e.AssetID, err)
			}
		}
	}
	for i := range p.Cursors {
		c := &p.Cursors[i]
		if len(c.Value) > MaxWatchCursorBytes {
			return fmt.Errorf("the cursor of watcher %q is %d bytes, more than the limit of %d: %w",
				c.Watcher, len(c.Value), MaxWatchCursorBytes, core.ErrInvalid)
		}
		v, err := statevalue.ParseValue(c.Value)
		if err != nil {
			return fmt.Errorf("the cursor of watcher %q: %w", c.Watcher, err)
		}
		c.Value = v
	}
	for i := range p.State {
		w := &p.State[i]
		if err := statevalue.CheckKey(w.Key); err != nil {
			return fmt.Errorf("watcher %q: %w", w.Watcher, err)
		}
		if w.Key == core.WatcherCursorKey(w.Watcher) {
			return fmt.Errorf("watcher %q: state key %q is its cursor; commit it as the cursor: %w", w.Watcher, w.Key, core.ErrInvalid)
		}
		if w.Value == nil {
			continue
		}
		if len(w.Value) > MaxWatchCursorBytes {
			return fmt.Errorf("state key %q of watcher %q is %d bytes, more than the limit of %d: %w",
				w.Key, w.Watcher, len(w.Value), MaxWatchCursorBytes, core.ErrInvalid)
		}
		v, err := statevalue.ParseValue(w.Value)
		if err != nil {
			return fmt.Errorf("state key %q of watcher %q: %w", w.Key, w.Watcher, err)
		}
		w.Value = v
	}
	return nil
}

// ReportWatcherPolls records polls in the watchers' health.
func (s *Service) ReportWatcherPolls(ctx context.Context, polls []store.WatcherPoll) error {
	return s.st.WatcherReportPolls(ctx, polls)
}

// AssetWatchers lists the watchers of asset assetID (all assets when 0)
// with their cursor and health (docs/watchers.md#health), kwargs masked,
// each marked alive when its triggerer's heartbeat is within threshold.
func (s *Service) AssetWatchers(ctx context.Context, assetID int64, threshold time.Duration) ([]core.Watcher, error) {
	ws, err := s.st.WatcherList(ctx, &store.WatcherListParams{AssetID: assetID})
	if err != nil {
		return nil, err
	}
	jobs, err := s.st.JobList(ctx)
	if err != nil {
		return nil, err
	}
	beats := map[string]time.Time{}
	for _, j := range jobs {
		beats[j.ID] = j.Heartbeat
	}
	now := s.clock.Now()
	for i := range ws {
		w := &ws[i]
		w.Trigger.Kwargs = secrets.MaskJSON(w.Trigger.Kwargs)
		if hb, ok := beats[w.TriggererID]; ok && now.Sub(hb) <= threshold {
			w.TriggererAlive = true
		}
	}
	return ws, nil
}

// AssetWatcher returns watcher name of asset assetID (as AssetWatchers);
// core.ErrNotFound naming the asset's watchers when it has none so named.
func (s *Service) AssetWatcher(ctx context.Context, assetID int64, name string, threshold time.Duration) (*core.Watcher, error) {
	ws, err := s.AssetWatchers(ctx, assetID, threshold)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ws))
	for i := range ws {
		if ws[i].Name == name {
			return &ws[i], nil
		}
		names = append(names, ws[i].Name)
	}
	if len(names) == 0 {
		names = append(names, "none")
	}
	return nil, fmt.Errorf("asset %d has no watcher %q (its watchers: %s): %w", assetID, name, strings.Join(names, ", "), core.ErrNotFound)
}

// WatcherCursorCheck checks an admin's cursor for watcher name of asset
// assetID as its polls would read it (trigger.Registry.CheckCursor, by the
// watcher's trigger type); a key of no watcher is not checked; nil without
// a registry. It is statestore.Config.CheckCursor, which AdminSet runs:
// every route that writes a cursor (set-cursor, the asset-state routes
// and panel) refuses one that every poll would fail on.
func WatcherCursorCheck(st store.Store, reg *trigger.Registry) func(ctx context.Context, assetID int64, name string, raw []byte) error {
	if reg == nil {
		return nil
	}
	return func(ctx context.Context, assetID int64, name string, raw []byte) error {
		ws, err := st.WatcherList(ctx, &store.WatcherListParams{AssetID: assetID})
		if err != nil {
			return err
		}
		for _, w := range ws {
			if w.Name == name {
				if err := reg.CheckCursor(w.Trigger.Type, raw); err != nil {
					return fmt.Errorf("watcher %q of asset %q: %w", name, w.AssetName, err)
				}
			}
		}
		return nil
	}
}

// SetWatcherCursor sets the cursor of watcher name of asset assetID to raw
// (any JSON value but null), or with raw nil deletes it, so that the
// watcher starts over: an audited asset-state edit by actor (role op,
// through states, which check the cursor: statestore.Config.CheckCursor),
// which a poll in flight cannot overwrite (docs/watchers.md#cursors).
// Returns the watcher as it is then.
func (s *Service) SetWatcherCursor(ctx context.Context, states *statestore.Service, actor core.Actor, assetID int64,
	name string, raw []byte, threshold time.Duration) (*core.Watcher, error) {
	if _, err := s.AssetWatcher(ctx, assetID, name, threshold); err != nil {
		return nil, err
	}
	scope, key := core.AssetScope(assetID), core.WatcherCursorKey(name)
	var err error
	if raw == nil {
		err = states.AdminDelete(ctx, actor, scope, key)
	} else {
		_, err = states.AdminSet(ctx, actor, scope, key, raw, statevalue.Retention{})
	}
	if err != nil {
		return nil, err
	}
	return s.AssetWatcher(ctx, assetID, name, threshold)
}
