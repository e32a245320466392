package statestore

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// Defaults of [state_store].
const (
	DefaultRetentionDays = 30
	DefaultMaxValueBytes = 65536
)

// bodySlack is what an HTTP body may carry beyond the value itself (the
// envelope, whitespace the value loses when normalized).
const bodySlack = 64 << 10

// Config is the [state_store] section as Service needs it.
type Config struct {
	// DefaultRetentionDays is the expiry of a task-state key written
	// without a retention, in days after the write; 0 = such keys never
	// expire.
	DefaultRetentionDays int
	// MaxValueBytes bounds a value's normalized JSON; 0 = DefaultMaxValueBytes.
	MaxValueBytes int
	// ClearOnSuccess deletes a task instance's keys when it succeeds.
	ClearOnSuccess bool
	// CleanupBatchSize is how many rows one cleanup statement deletes
	// (a commit each); 0 = all in one statement.
	CleanupBatchSize int
	// AssetOrphanRetentionDays is how long cleanup keeps the state of an
	// inactive asset, in days after it became inactive; 0 = cleanup never
	// sweeps asset state.
	AssetOrphanRetentionDays int
	// AllowUndeclaredAssetReads lets any running task read the state of any
	// asset, declared or not; writes always need the declaration.
	AllowUndeclaredAssetReads bool
	// ObjectGrace is how long a worker has to write an object and store
	// its reference before the sweep removes it; 0 = DefaultObjectGrace.
	ObjectGrace time.Duration
	// CheckCursor, when set, checks an admin's write of an asset watcher's
	// cursor (core.WatcherCursorKey) as the watcher's polls would read it
	// (service.WatcherCursorCheck): a cursor every poll would refuse is
	// refused when it is set, on every route that sets it.
	CheckCursor func(ctx context.Context, assetID int64, watcher string, raw []byte) error
}

// Store is what Service needs of the store: state itself, assets and
// aliases to resolve asset scopes and a try's inlets, task instances to
// check an admin edit's scope, and transactions for audited edits.
type Store interface {
	store.StateStore
	store.StateObjects
	AssetGet(ctx context.Context, id int64) (*core.AssetModel, error)
	AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error)
	AssetGetByURI(ctx context.Context, uri string) (*core.AssetModel, error)
	AssetAliasResolve(ctx context.Context, alias string) ([]core.AssetModel, error)
	TaskInstanceGetByKey(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error)
	WithTx(ctx context.Context, fn func(tx store.Store) error) error
}

// Service is the state store every caller uses: the Execution API, the REST
// API, the CLI and the scheduler's cleanup. It validates keys and values,
// enforces the size limit on every write, computes expiry with its clock at
// write time, resolves asset scopes, and delegates storage to a Backend.
type Service struct {
	st      Store
	backend func(st store.StateStore) Backend
	clock   core.Clock
	cfg     Config
}

// New returns a Service over st with the metastore backend; clock nil means
// the system clock.
func New(st Store, clock core.Clock, cfg Config) *Service {
	if clock == nil {
		clock = core.SystemClock{}
	}
	if cfg.MaxValueBytes <= 0 {
		cfg.MaxValueBytes = DefaultMaxValueBytes
	}
	if cfg.ObjectGrace <= 0 {
		cfg.ObjectGrace = DefaultObjectGrace
	}
	return &Service{st: st, clock: clock, cfg: cfg,
		backend: func(st store.StateStore) Backend { return &Metastore{Store: st} }}
}

// Config returns the configuration in effect (defaults applied).
func (s *Service) Config() Config { return s.cfg }

// MaxBodyBytes is the largest HTTP request body a write may send: the value
// limit plus room for the envelope. Larger bodies are refused with 413.
func (s *Service) MaxBodyBytes() int64 { return int64(s.cfg.MaxValueBytes) + bodySlack }

// TooLarge is the error of a value over the limit; it wraps
// core.ErrTooLarge and names the limit. size < 0 means the size is unknown
// (a request body that was cut off).
func (s *Service) TooLarge(key string, size int) error {
	if size < 0 {
		return fmt.Errorf("value of state key %q is over the limit of %d bytes ([state_store] max_value_bytes): %w",
			key, s.cfg.MaxValueBytes, core.ErrTooLarge)
	}
	return fmt.Errorf("value of state key %q is %d bytes, over the limit of %d bytes ([state_store] max_value_bytes): %w",
		key, size, s.cfg.MaxValueBytes, core.ErrTooLarge)
}

// Get returns the entry of key in scope; an error wrapping core.ErrNotFound
// when the key (or the scope's asset) is absent.
func (s *Service) Get(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error) {
	if err := statevalue.CheckKey(key); err != nil {
		return nil, err
	}
	scope, err := s.assetID(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.backend(s.st).Get(ctx, scope, key)
}

// Set writes key in scope by by and returns the entry as written. It is
// the write of a running try (never of an asset's watchers' keys:
// tryWritable); REST and the CLI use AdminSet.
func (s *Service) Set(ctx context.Context, scope core.StateScope, key string, raw []byte, r statevalue.Retention, by core.StateWriter) (*core.StateEntry, error) {
	if err := tryWritable(scope, key); err != nil {
		return nil, err
	}
	scope, err := s.assetID(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.set(ctx, s.st, scope, key, raw, r, by)
}

// tryWritable refuses a try's write of an asset's watchers' keys (their
// cursors, core.WatcherKeyPrefix): a cursor moved by a task would make the
// watcher fire again what it had fired, or skip what it had not. A task
// may read them; an admin moves a cursor with an audited edit.
func tryWritable(scope core.StateScope, key string) error {
	if scope.Kind != core.StateAsset || !core.IsWatcherKey(key) {
		return nil
	}
	return fmt.Errorf("state key %q of %s is its watchers' (keys under %q hold their cursors, written with the events "+
		"they cover): a task may read it, not write it; an admin moves a cursor with `weir assets watchers set-cursor` "+
		"or the watcher's cursor route, audited: %w", key, scope.Describe(), core.WatcherKeyPrefix, core.ErrForbidden)
}

// set validates raw (ParseValue), enforces the size limit, computes the
// expiry from r at the service clock's now (docs/task-state.md#retention;
// only task state has retention) and writes key through st.
func (s *Service) set(ctx context.Context, st store.StateStore, scope core.StateScope, key string, raw []byte, r statevalue.Retention, by core.StateWriter) (*core.StateEntry, error) {
	if err := statevalue.CheckKey(key); err != nil {
		return nil, err
	}
	value, err := statevalue.ParseValue(raw)
	if err != nil {
		return nil, fmt.Errorf("state key %q: %w", key, err)
	}
	if len(value) > s.cfg.MaxValueBytes {
		return nil, s.TooLarge(key, len(value))
	}
	object, err := s.objectOf(ctx, scope, key, value)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	w := Write{Value: value, UpdatedAt: now, By: by, Object: object}
	if scope.Kind == core.StateTask {
		w.ExpiresAt, w.NeverExpire = r.Expiry(now, s.cfg.DefaultRetentionDays)
	} else if !r.IsDefault() {
		return nil, fmt.Errorf("state key %q: %s state has no retention: %w", key, scope.Kind, core.ErrInvalid)
	}
	if err := s.backend(st).Set(ctx, scope, key, w); err != nil {
		return nil, err
	}
	return &core.StateEntry{Scope: scope, Key: key, Value: w.Value, UpdatedAt: w.UpdatedAt, UpdatedBy: by,
		ExpiresAt: w.ExpiresAt, NeverExpire: w.NeverExpire}, nil
}

// Delete removes key from scope; an absent key is not an error. It is a
// running try's, as Set.
func (s *Service) Delete(ctx context.Context, scope core.StateScope, key string) error {
	if err := statevalue.CheckKey(key); err != nil {
		return err
	}
	if err := tryWritable(scope, key); err != nil {
		return err
	}
	scope, err := s.assetID(ctx, scope)
	if err != nil {
		return err
	}
	return s.backend(s.st).Delete(ctx, scope, key)
}

// Clear removes every key of scope (of every map index of the task with
// allMapIndices) but an asset's watchers' keys: a running try's clear, as
// Set (an admin's is AdminClear).
func (s *Service) Clear(ctx context.Context, scope core.StateScope, allMapIndices bool) error {
	scope, err := s.assetID(ctx, scope)
	if err != nil {
		return err
	}
	return s.backend(s.st).Clear(ctx, scope, Clearing{AllMapIndices: allMapIndices, KeepWatchers: true})
}

// List returns one page of the entries p selects and how many it selects
// in all (the REST API's total_entries).
func (s *Service) List(ctx context.Context, p *store.StateListParams) ([]core.StateEntry, int, error) {
	return store.List(ctx, p, s.st.StateList, s.st.StateCount)
}

// Resolve returns scope as stored, or an error wrapping core.ErrNotFound
// naming what does not exist: a task scope's task instance must exist; an
// asset scope (by id, name or uri) gets the asset's id, name and uri.
func (s *Service) Resolve(ctx context.Context, scope core.StateScope) (core.StateScope, error) {
	if err := scope.Validate(); err != nil {
		return scope, err
	}
	if scope.Kind == core.StateAsset {
		a, err := s.ResolveAsset(ctx, scope)
		if err != nil {
			return scope, err
		}
		return assetScope(a), nil
	}
	if _, err := s.st.TaskInstanceGetByKey(ctx, scope.DagID, scope.RunID, scope.TaskID, scope.MapIndex); err != nil {
		return scope, fmt.Errorf("task instance dag_id %q dag_run_id %q task_id %q map_index %d: %w",
			scope.DagID, scope.RunID, scope.TaskID, scope.MapIndex, err)
	}
	return scope, nil
}

// ResolveAsset returns the asset an asset scope names: by id when set,
// otherwise by name, otherwise by URI. An unknown asset wraps
// core.ErrNotFound. It does not care whether the asset is active: callers
// that do (AuthorizeTry) check.
func (s *Service) ResolveAsset(ctx context.Context, scope core.StateScope) (*core.AssetModel, error) {
	var (
		a   *core.AssetModel
		err error
	)
	switch {
	case scope.Kind != core.StateAsset:
		return nil, fmt.Errorf("%s is not an asset scope: %w", scope, core.ErrInvalid)
	case scope.AssetID != 0:
		a, err = s.st.AssetGet(ctx, scope.AssetID)
	case scope.AssetName != "":
		a, err = s.st.AssetGetByName(ctx, scope.AssetName)
	case scope.AssetURI != "":
		a, err = s.st.AssetGetByURI(ctx, scope.AssetURI)
	default:
		return nil, scope.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", scope.Describe(), err)
	}
	return a, nil
}

// assetID resolves an asset scope named by name or uri to its id (no
// lookup when it has one); other scopes pass through.
func (s *Service) assetID(ctx context.Context, scope core.StateScope) (core.StateScope, error) {
	if scope.Kind != core.StateAsset || scope.AssetID != 0 {
		return scope, nil
	}
	a, err := s.ResolveAsset(ctx, scope)
	if err != nil {
		return scope, err
	}
	return assetScope(a), nil
}

// assetScope is the scope of a stored asset, with its id, name and uri.
func assetScope(a *core.AssetModel) core.StateScope {
	sc := core.AssetScope(a.ID)
	sc.AssetName, sc.AssetURI = a.Name, a.URI
	return sc
}
