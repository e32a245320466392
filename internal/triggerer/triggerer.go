// Package triggerer is the triggerer role: it claims trigger rows (those
// unassigned, and those of a triggerer whose heartbeat went stale) up to
// its capacity, runs each trigger as a goroutine with its own context, and
// commits every event through the service layer behind its hold on the
// trigger, so that a triggerer that lost a trigger commits nothing and a
// deferred try resumes once. Any number of triggerers may share one
// PostgreSQL database; standalone runs one. docs/triggers.md.
package triggerer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/trigger"
)

// Defaults for Config fields left zero.
const (
	DefaultCapacity          = 1000
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultStreamRetention   = 24 * time.Hour
	// cleanupInterval is how often triggers no try waits on are deleted.
	cleanupInterval = 10 * time.Second
)

// Role is the job role a triggerer's heartbeat row carries.
const Role = "triggerer"

// Config tunes a triggerer.
type Config struct {
	// Capacity is how many triggers it runs at most ([triggerer] capacity).
	Capacity int
	// HeartbeatInterval is how often its job row is refreshed; a triggerer
	// silent for 1.5 intervals is dead and its triggers are claimed by the
	// others, which look every quarter interval: a dead triggerer's
	// triggers run again elsewhere within two intervals.
	HeartbeatInterval time.Duration
	// StreamRetention is how long consumed stream events are kept
	// ([triggerer] stream_retention).
	StreamRetention time.Duration
	// OnlyDagRunID, when not 0, confines the triggerer to the triggers of
	// that run's instances: `weir dags test`'s runs no other DAG's
	// deferrals and no asset watcher of the deployment it shares a
	// database with, and leaves the deployment's housekeeping (unused
	// triggers, consumed stream events, watchers without a trigger) to it.
	OnlyDagRunID int64
}

// Triggerer is the triggerer service. Set the fields, then call Start.
type Triggerer struct {
	Service  *service.Service
	Store    Store
	Registry *trigger.Registry
	// Connections resolves the conn_ids triggers name.
	Connections trigger.ConnectionLookup
	Clock       core.Clock
	Logger      *slog.Logger
	Config      Config
	// Logs, when set, is the task log store (the api-servers': the
	// database, or a folder shared with them, as in standalone): a
	// trigger's log lines are appended to the log of each try waiting on
	// it, until it fires.
	Logs tasklog.Logs
	// Version is the Weir version written into the job row.
	Version string
	// Observer, when set, is told of every event a trigger commits and
	// every failed trigger run (metrics).
	Observer Observer

	id      string
	mu      sync.Mutex
	running map[int64]context.CancelFunc
	// ended holds triggers whose run ended while still listed as owned
	// (the row is deleted in the transaction of its last event, which a
	// pass's list may predate): they are not started again.
	ended map[int64]bool
	// watches are the running watcher triggers' watchers.
	watches map[int64]*watch
	wg      sync.WaitGroup
	// reconciled is when the running triggers were last compared with
	// the rows owned (pass's goroutine only).
	reconciled time.Time
}

// Store is what a triggerer reads and claims (package store documents each
// method); changes go through the Service.
type Store interface {
	job.Store
	trigger.RunReader
	TriggerClaim(ctx context.Context, p *store.TriggerClaimParams) ([]core.Trigger, error)
	TriggerList(ctx context.Context, p *store.TriggerListParams) ([]core.Trigger, error)
	TriggerDeleteUnused(ctx context.Context, ids ...int64) (int, error)
	WatcherList(ctx context.Context, p *store.WatcherListParams) ([]core.Watcher, error)
	StateGet(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error)
	WatcherAttachTriggers(ctx context.Context, now time.Time) (int, error)
	TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error)
	StreamGet(ctx context.Context, id string) (*core.Stream, error)
	Subscribe(ctx context.Context, channel string) <-chan struct{}
}

// ID returns the triggerer's job id (set once Start began).
func (t *Triggerer) ID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}

// Running returns how many triggers run now.
func (t *Triggerer) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.running)
}

func (t *Triggerer) init() {
	if t.Clock == nil {
		t.Clock = core.SystemClock{}
	}
	if t.Logger == nil {
		t.Logger = slog.New(slog.DiscardHandler)
	}
	if t.Config.Capacity <= 0 {
		t.Config.Capacity = DefaultCapacity
	}
	if t.Config.HeartbeatInterval <= 0 {
		t.Config.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if t.Config.StreamRetention <= 0 {
		t.Config.StreamRetention = DefaultStreamRetention
	}
	t.mu.Lock()
	t.id = uuid.NewString()
	t.running = map[int64]context.CancelFunc{}
	t.ended = map[int64]bool{}
	t.watches = map[int64]*watch{}
	t.mu.Unlock()
}

// Start heartbeats, claims and runs triggers until ctx is done; it then
// cancels its triggers, waits for them and returns nil. A failed pass (the
// database is briefly unavailable) is logged and retried.
func (t *Triggerer) Start(ctx context.Context) error {
	t.init()
	hb := t.Config.HeartbeatInterval
	host, _ := os.Hostname()
	// The first heartbeat is written before any claim, so that no other
	// triggerer takes this one's triggers for dead.
	if err := t.Store.JobHeartbeat(ctx, &core.Job{ID: t.id, Role: Role, Hostname: host, PID: os.Getpid(),
		StartedAt: t.Clock.Now(), Heartbeat: t.Clock.Now(), Interval: hb, Version: t.Version}); err != nil && ctx.Err() == nil {
		t.Logger.Warn("triggerer heartbeat", "err", err)
	}
	beat := &job.Heartbeat{ID: t.id, Store: t.Store, Role: Role, Clock: t.Clock, Interval: hb, Logger: t.Logger, Version: t.Version}
	var beats sync.WaitGroup
	beats.Add(1)
	go func() { defer beats.Done(); _ = beat.Start(ctx) }()
	defer beats.Wait()

	t.Logger.Info("triggerer started", "id", t.id, "capacity", t.Config.Capacity)
	wake := t.Store.Subscribe(ctx, store.ChannelTrigger)
	loop := min(max(hb/4, 100*time.Millisecond), time.Second)
	ticker := time.NewTicker(loop)
	defer ticker.Stop()
	var lastCleanup time.Time
	for {
		if err := t.pass(ctx); err != nil && ctx.Err() == nil {
			t.Logger.Warn("triggerer pass", "err", err)
		}
		if now := t.Clock.Now(); now.Sub(lastCleanup) >= cleanupInterval {
			lastCleanup = now
			t.housekeep(ctx, now)
		}
		select {
		case <-ctx.Done():
			t.stopAll()
			return nil
		case <-ticker.C:
		case <-wake:
		}
	}
}

// housekeep deletes the triggers no try waits on and the consumed stream
// events past retention, and gives the asset watchers without a trigger
// one. A confined triggerer leaves that to the deployment's: it keeps to
// its run (Config.OnlyDagRunID).
func (t *Triggerer) housekeep(ctx context.Context, now time.Time) {
	if t.Config.OnlyDagRunID != 0 {
		return
	}
	if _, err := t.Store.TriggerDeleteUnused(ctx); err != nil && ctx.Err() == nil {
		t.Logger.Warn("delete unused triggers", "err", err)
	}
	if n, err := t.Store.WatcherAttachTriggers(ctx, now); err != nil && ctx.Err() == nil {
		t.Logger.Warn("attach triggers to watchers", "err", err)
	} else if n > 0 {
		t.Logger.Info("watchers given a trigger", "count", n)
	}
	t.cleanStreams(ctx)
}

// pass claims what capacity allows and starts the triggers it took; every
// heartbeat interval it also reconciles with the rows it owns: it stops
// the triggers it no longer owns (taken over, or deleted once their
// waiters resumed or timed out) and starts any owned one not running. A
// claim returns the rows it took, so a pass costs in proportion to what
// changed, not to the triggers running.
func (t *Triggerer) pass(ctx context.Context) error {
	if free := t.Config.Capacity - t.Running(); free > 0 {
		alive := t.Clock.Now().Add(-t.Config.HeartbeatInterval * 3 / 2)
		claimed, err := t.Store.TriggerClaim(ctx, &store.TriggerClaimParams{TriggererID: t.id, AliveSince: alive, Limit: free,
			DagRunID: t.Config.OnlyDagRunID})
		if err != nil {
			return err
		}
		t.mu.Lock()
		for i := range claimed {
			delete(t.ended, claimed[i].ID) // a new claim: its earlier run here is over
			t.startLocked(ctx, &claimed[i])
		}
		t.mu.Unlock()
	}
	if now := t.Clock.Now(); now.Sub(t.reconciled) >= t.Config.HeartbeatInterval {
		t.reconciled = now
		return t.reconcile(ctx)
	}
	return nil
}

// reconcile makes the running triggers the ones this triggerer owns, and
// refreshes its watchers (reconcileWatches).
func (t *Triggerer) reconcile(ctx context.Context) error {
	owned, err := t.Store.TriggerList(ctx, &store.TriggerListParams{TriggererID: t.id})
	if err != nil {
		return err
	}
	keep := make(map[int64]bool, len(owned))
	for i := range owned {
		keep[owned[i].ID] = true
	}
	t.mu.Lock()
	for id, cancel := range t.running {
		if !keep[id] {
			cancel()
			delete(t.running, id)
		}
	}
	for id := range t.ended {
		if !keep[id] {
			delete(t.ended, id)
		}
	}
	for i := range owned {
		t.startLocked(ctx, &owned[i])
	}
	t.mu.Unlock()
	return t.reconcileWatches(ctx)
}

// startLocked starts row's trigger unless it runs, ended here while still
// owned, or capacity is full. t.mu is held.
func (t *Triggerer) startLocked(ctx context.Context, row *core.Trigger) {
	if _, ok := t.running[row.ID]; ok || t.ended[row.ID] || len(t.running) >= t.Config.Capacity {
		return
	}
	tr := *row
	tctx, cancel := context.WithCancel(ctx)
	t.running[tr.ID] = cancel
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer t.forget(tr.ID)
		t.run(tctx, cancel, &tr)
	}()
}

// forget drops a finished trigger from the running set.
func (t *Triggerer) forget(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cancel, ok := t.running[id]; ok {
		cancel()
		delete(t.running, id)
		t.ended[id] = true
	}
}

func (t *Triggerer) stopAll() {
	t.mu.Lock()
	for _, cancel := range t.running {
		cancel()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// run runs one trigger until it ends, is cancelled, or its last waiter
// resumed. A trigger that fails, or ends without an event, fails its
// waiters with the reason.
func (t *Triggerer) run(ctx context.Context, stop context.CancelFunc, row *core.Trigger) {
	log := t.Logger.With("trigger_id", row.ID, "type", row.Type)
	tr, err := t.Registry.New(row.Spec())
	if err != nil {
		if row.StreamID != "" {
			t.closeUnbuilt(ctx, log, row, err)
			return
		}
		t.fail(ctx, stop, log, row, fmt.Sprintf("the trigger cannot be built: %v", err))
		return
	}
	if row.StreamID != "" {
		t.runStream(ctx, stop, row, tr)
		return
	}
	ws, err := t.Store.WatcherList(ctx, &store.WatcherListParams{TriggerID: row.ID, Running: true})
	if err != nil {
		// Not started: the next reconcile starts it again.
		log.Warn("find the trigger's watchers", "err", err)
		t.unstart(stop, row.ID)
		return
	}
	if len(ws) > 0 {
		t.runWatcher(ctx, stop, row, tr, ws)
		return
	}
	events := 0
	lw := t.logWriter(ctx, log, row)
	rt := &trigger.Runtime{ID: row.ID, CreatedAt: row.CreatedAt, Clock: t.Clock, Log: lw,
		Connections: t.Connections, Runs: t.Store,
		EmitFunc: func(ectx context.Context, e trigger.Event) error {
			lw.fired.Store(true) // the waiters' logs are theirs again once they resume
			var waiting bool
			err := untilCommitted(ectx, log, "commit the trigger's event", func() (err error) {
				waiting, err = t.Service.FireTrigger(ectx, row.ID, t.id, e.Payload)
				return err
			})
			if err != nil {
				if errors.Is(err, core.ErrConflict) {
					stop() // another triggerer owns it now
				}
				return fmt.Errorf("commit event of trigger %d: %w", row.ID, err)
			}
			events++
			t.fired(row.Type, 1)
			if !waiting {
				stop()
			}
			return nil
		}}
	err = runSafely(ctx, tr, rt)
	switch {
	case ctx.Err() != nil:
		// Stopped: its waiters resumed, it moved, or the triggerer stops.
	case err != nil:
		t.fail(ctx, stop, log, row, fmt.Sprintf("the %s trigger failed: %v", row.Type, err))
	case events == 0:
		t.fail(ctx, stop, log, row, fmt.Sprintf("the %s trigger ended without an event", row.Type))
	}
}

// fail ends a trigger's waiters with msg. When that cannot be recorded
// (the database is unavailable until ctx ends), the trigger is unstarted:
// the next reconcile runs it again rather than leaving its waiters
// deferred behind a trigger no one runs.
func (t *Triggerer) fail(ctx context.Context, stop context.CancelFunc, log *slog.Logger, row *core.Trigger, msg string) {
	log.Warn("trigger failed", "reason", msg)
	t.failed(row.Type)
	t.logWriter(ctx, log, row).line("trigger failed: " + msg)
	err := untilCommitted(ctx, log, "fail the trigger's waiters", func() error {
		return t.Service.FailTrigger(ctx, row.ID, t.id, msg)
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, core.ErrConflict) {
		log.Warn("fail the trigger's waiters; the next reconcile runs the trigger again", "err", err)
		t.unstart(stop, row.ID)
	}
}

// runSafely runs tr, turning a panic into an error.
func runSafely(ctx context.Context, tr trigger.Trigger, rt *trigger.Runtime) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return tr.Run(ctx, rt)
}

// logWriter turns a trigger's log lines into the triggerer's log records
// and, while it has not fired, lines of its waiting tries' logs.
type logWriter struct {
	ctx  context.Context
	log  *slog.Logger
	logs tasklog.Logs // the task log store; nil = none
	// find returns the logs of the tries waiting on the trigger. It runs at
	// the first line, not when the trigger starts: most triggers (a
	// timedelta) never write one, and a query in each trigger's goroutine
	// grows the stack it keeps while it waits (docs/benchmarks.md).
	find  func() []tasklog.Key
	once  sync.Once
	keys  []tasklog.Key
	fired atomic.Bool
	mu    sync.Mutex // one line at a time: each appends at the log's end as it reads it
}

// logWriter returns the log of trigger row; the tries waiting on it are
// found at its first line when the triggerer has the task log store.
func (t *Triggerer) logWriter(ctx context.Context, log *slog.Logger, row *core.Trigger) *logWriter {
	w := &logWriter{ctx: ctx, log: log, logs: t.Logs}
	w.find = func() []tasklog.Key {
		tis, err := t.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{TriggerID: row.ID})
		if err != nil {
			log.Warn("find the tries waiting on the trigger; its log goes to the triggerer's only", "err", err)
		}
		keys := make([]tasklog.Key, 0, len(tis))
		for i := range tis {
			keys = append(keys, tasklog.KeyOf(&tis[i]))
		}
		return keys
	}
	return w
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.line(string(trimNewline(p)))
	return len(p), nil
}

// line writes one line: to the triggerer's log, and to the waiting tries'.
func (w *logWriter) line(s string) {
	w.log.Info(s)
	if w.logs == nil || w.fired.Load() {
		return
	}
	w.once.Do(func() { w.keys = w.find() })
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.keys {
		// The try waits: no worker appends to its log until the trigger
		// has fired, and its resumed try goes on from the log's end.
		size, err := w.logs.Size(w.ctx, k)
		if err == nil {
			_, err = w.logs.AppendAt(w.ctx, k, size, []byte("[triggerer] "+s+"\n"))
		}
		if err != nil {
			w.log.Warn("append to a waiting try's log", "err", err)
		}
	}
}

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
