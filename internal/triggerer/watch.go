package triggerer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/trigger"
)

// maxRestartDelay bounds the wait before a watcher trigger that ended or
// failed runs again.
const maxRestartDelay = 5 * time.Minute

// watch is the trigger.Watcher of one running watcher trigger: the assets
// it runs for with their committed cursors (refreshed at each reconcile
// and after a conflict), and the last poll not yet written to their
// health (written at each reconcile, so health costs one statement per
// heartbeat interval, not one per poll).
type watch struct {
	t    *Triggerer
	id   int64
	typ  string // the trigger's type
	stop context.CancelFunc
	log  *slog.Logger

	mu          sync.Mutex
	watchers    []core.Watcher // by asset name
	report      *store.WatcherPoll
	errorsInRow int
}

var _ trigger.Watcher = (*watch)(nil)

// set replaces the watched list (ws are this trigger's watchers).
func (w *watch) set(ws []core.Watcher) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchers = ws
}

// Watched returns the assets and their cursors.
func (w *watch) Watched() []trigger.Watched {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]trigger.Watched, len(w.watchers))
	for i, x := range w.watchers {
		out[i] = trigger.Watched{Asset: trigger.AssetInfo{Name: x.AssetName, URI: x.AssetURI, Extra: x.AssetExtra},
			Watcher: x.Name, Cursor: x.Cursor}
	}
	return out
}

// Commit commits b through the service; on success the new cursors are
// the ones later polls see, on a conflict the list is read again (an
// admin's cursor) and the trigger stops when it moved to another
// triggerer.
func (w *watch) Commit(ctx context.Context, b trigger.Batch) error {
	p, err := w.params(b)
	if err != nil {
		return err
	}
	res, err := w.t.Service.CommitWatch(ctx, p)
	if errors.Is(err, core.ErrConflict) {
		w.refresh(ctx)
	}
	if err != nil {
		return fmt.Errorf("commit poll of trigger %d: %w", w.id, err)
	}
	w.t.fired(w.typ, len(b.Events))
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, c := range p.Cursors {
		for j := range w.watchers {
			if x := &w.watchers[j]; x.AssetID == c.AssetID && x.Name == c.Watcher {
				x.Cursor, x.CursorVersion = c.Value, res.Versions[i]
			}
		}
	}
	return nil
}

// params turns a batch naming assets into the store's commit.
func (w *watch) params(b trigger.Batch) (*store.WatcherCommitParams, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	find := func(name string) (*core.Watcher, error) {
		for i := range w.watchers {
			if w.watchers[i].AssetName == name {
				return &w.watchers[i], nil
			}
		}
		names := make([]string, len(w.watchers))
		for i := range w.watchers {
			names[i] = w.watchers[i].AssetName
		}
		return nil, fmt.Errorf("asset %q is not watched by this trigger (it watches %s): %w",
			name, strings.Join(names, ", "), core.ErrInvalid)
	}
	p := &store.WatcherCommitParams{TriggerID: w.id, TriggererID: w.t.id}
	for _, e := range b.Events {
		extra, err := trigger.EventExtra(e.Payload)
		if err != nil {
			return nil, err
		}
		var part *string
		if e.PartitionKey != "" {
			part = &e.PartitionKey
		}
		targets := w.watchers
		if e.Asset != "" {
			x, err := find(e.Asset)
			if err != nil {
				return nil, err
			}
			targets = []core.Watcher{*x}
		}
		for _, x := range targets {
			p.Events = append(p.Events, store.WatcherEvent{AssetID: x.AssetID, Watcher: x.Name, Extra: extra, PartitionKey: part})
		}
	}
	names := make([]string, 0, len(b.Cursors))
	for name := range b.Cursors {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		x, err := find(name)
		if err != nil {
			return nil, err
		}
		p.Cursors = append(p.Cursors, store.WatcherCursor{AssetID: x.AssetID, Watcher: x.Name, Value: b.Cursors[name],
			Version: x.CursorVersion})
	}
	for _, name := range slices.Sorted(maps.Keys(b.State)) {
		x, err := find(name)
		if err != nil {
			return nil, err
		}
		for _, key := range slices.Sorted(maps.Keys(b.State[name])) {
			p.State = append(p.State, store.WatcherCursor{AssetID: x.AssetID, Watcher: x.Name, Key: key, Value: b.State[name][key]})
		}
	}
	return p, nil
}

// ReadState reads key of a watched asset's state.
func (w *watch) ReadState(ctx context.Context, asset, key string) (json.RawMessage, error) {
	w.mu.Lock()
	var id int64
	for i := range w.watchers {
		if w.watchers[i].AssetName == asset {
			id = w.watchers[i].AssetID
		}
	}
	w.mu.Unlock()
	if id == 0 {
		return nil, fmt.Errorf("asset %q is not watched by this trigger: %w", asset, core.ErrInvalid)
	}
	e, err := w.t.Store.StateGet(ctx, core.AssetScope(id), key)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e.Value, nil
}

// refresh reads the trigger's watchers again; the trigger stops when they
// are gone or it is no longer this triggerer's.
func (w *watch) refresh(ctx context.Context) {
	ws, err := w.t.Store.WatcherList(ctx, &store.WatcherListParams{TriggerID: w.id, Running: true})
	if err != nil {
		w.log.Warn("read the watchers of the trigger again", "err", err)
		return
	}
	if len(ws) == 0 || ws[0].TriggererID != w.t.id {
		w.stop()
		return
	}
	w.set(ws)
}

// Polled keeps the poll's outcome for the next health report. An error not
// reported yet stays in it when a poll succeeds before the report: a
// failure the next poll recovered from still shows as the last error.
func (w *watch) Polled(start time.Time, took time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := &store.WatcherPoll{TriggerID: w.id, At: start, Duration: took}
	switch {
	case err != nil:
		w.errorsInRow++
		p.Err, p.ErrAt = err.Error(), start
		w.t.failed(w.typ)
	case w.report != nil:
		w.errorsInRow = 0
		p.Err, p.ErrAt = w.report.Err, w.report.ErrAt
	default:
		w.errorsInRow = 0
	}
	p.ErrorsInRow = w.errorsInRow
	w.report = p
}

// takeReport returns the poll not yet reported, if any.
func (w *watch) takeReport() *store.WatcherPoll {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.report
	w.report = nil
	return p
}

// runWatcher runs a watcher trigger until ctx ends: a run that ends or
// fails is recorded in the watchers' health and started again after a
// back-off. Each event it emits (rather than commits) is an event of every
// watched asset.
func (t *Triggerer) runWatcher(ctx context.Context, stop context.CancelFunc, row *core.Trigger, tr trigger.Trigger, ws []core.Watcher) {
	log := t.Logger.With("trigger_id", row.ID, "type", row.Type, "watcher", ws[0].Name)
	w := &watch{t: t, id: row.ID, typ: row.Type, stop: stop, log: log, watchers: ws}
	t.mu.Lock()
	t.watches[row.ID] = w
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.watches, row.ID)
		t.mu.Unlock()
	}()
	rt := &trigger.Runtime{ID: row.ID, CreatedAt: row.CreatedAt, Clock: t.Clock, Log: &logWriter{log: log},
		Connections: t.Connections, Runs: t.Store, Watcher: w,
		EmitFunc: func(ectx context.Context, e trigger.Event) error {
			return w.Commit(ectx, trigger.Batch{Events: []trigger.WatchEvent{{Payload: e.Payload}}})
		}}
	delay := time.Second
	for {
		start := time.Now()
		err := runSafely(ctx, tr, rt)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("it ended")
		}
		err = fmt.Errorf("the %s trigger stopped (%w); it runs again in %s", row.Type, err, delay)
		log.Warn("watcher trigger stopped", "err", err)
		w.Polled(start, time.Since(start), err)
		if trigger.Sleep(ctx, delay) != nil {
			return
		}
		delay = min(delay*2, maxRestartDelay)
	}
}

// reconcileWatches refreshes the watched lists of the running watcher
// triggers and writes their polls' health, in one query and one
// transaction.
func (t *Triggerer) reconcileWatches(ctx context.Context) error {
	t.mu.Lock()
	watches := make(map[int64]*watch, len(t.watches))
	for id, w := range t.watches {
		watches[id] = w
	}
	t.mu.Unlock()
	if len(watches) == 0 {
		return nil
	}
	var polls []store.WatcherPoll
	for _, w := range watches {
		if p := w.takeReport(); p != nil {
			polls = append(polls, *p)
		}
	}
	if err := t.Service.ReportWatcherPolls(ctx, polls); err != nil {
		return fmt.Errorf("report watcher polls: %w", err)
	}
	ws, err := t.Store.WatcherList(ctx, &store.WatcherListParams{TriggererID: t.id, Running: true})
	if err != nil {
		return err
	}
	byTrigger := map[int64][]core.Watcher{}
	for _, x := range ws {
		byTrigger[x.TriggerID] = append(byTrigger[x.TriggerID], x)
	}
	for id, w := range watches {
		if list := byTrigger[id]; len(list) > 0 {
			w.set(list)
		}
	}
	return nil
}
