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
	// DefaultRetentionDays is the expiry of a key written without a
	// retention, in days after the write; 0 = such keys never expire.
	DefaultRetentionDays int
	// MaxValueBytes bounds a value's normalized JSON; 0 = DefaultMaxValueBytes.
	MaxValueBytes int
	// ClearOnSuccess deletes a task instance's keys when it succeeds.
	ClearOnSuccess bool
	// CleanupBatchSize is how many rows one cleanup statement deletes
	// (a commit each); 0 = all in one statement.
	CleanupBatchSize int
	// AssetOrphanRetentionDays is how long cleanup keeps the state of an
	// inactive asset, in days after it became inactive (SPEC AS-5); 0 =
	// cleanup never sweeps asset state.
	AssetOrphanRetentionDays int
	// AllowUndeclaredAssetReads lets any running task read the state of any
	// asset, declared or not (SPEC AS-4's relaxing switch); writes always
	// need the declaration.
	AllowUndeclaredAssetReads bool
}

// Writer names who writes a value: a task try (RunID, TryNumber) or, when
// zero, a user through the REST API or CLI. Asset state records the rest
// too (SPEC AS-6; see TaskWriter and UserWriter).
type Writer struct {
	RunID     string
	TryNumber int
	Kind      string // store.StateWriterTask, StateWriterUser, ...; asset state only
	DagID     string
	TaskID    string
	MapIndex  int
	User      string
}

// Service is the state store every caller uses: the Execution API, the REST
// API, the CLI and the scheduler's cleanup. It validates keys and values,
// enforces the size limit on every write, computes expiry with its clock at
// write time, and delegates storage to its Backend.
type Service struct {
	backend Backend
	st      store.Store
	clock   core.Clock
	cfg     Config
}

// New returns a Service over st with the metastore backend; clock nil means
// the system clock.
func New(st store.Store, clock core.Clock, cfg Config) *Service {
	if clock == nil {
		clock = core.SystemClock{}
	}
	if cfg.MaxValueBytes <= 0 {
		cfg.MaxValueBytes = DefaultMaxValueBytes
	}
	return &Service{backend: &Metastore{Store: st}, st: st, clock: clock, cfg: cfg}
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
// when it is absent.
func (s *Service) Get(ctx context.Context, scope Scope, key string) (*Entry, error) {
	if err := statevalue.CheckKey(key); err != nil {
		return nil, err
	}
	return s.backend.Get(ctx, scope, key)
}

// Set validates raw (ParseValue), enforces the size limit, computes the
// expiry from r at the service clock's now (SPEC TS-3) and writes key. It
// returns the entry as written.
func (s *Service) Set(ctx context.Context, scope Scope, key string, raw []byte, r statevalue.Retention, by Writer) (*Entry, error) {
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
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	w := Write{Value: value, UpdatedAt: now, UpdatedByRun: by.RunID, UpdatedByTry: by.TryNumber, By: by}
	if _, ok := scope.(TaskScope); ok {
		w.ExpiresAt, w.NeverExpire = r.Expiry(now, s.cfg.DefaultRetentionDays)
	} else if !r.IsDefault() {
		return nil, fmt.Errorf("state key %q: asset state has no retention: %w", key, core.ErrInvalid)
	}
	if err := s.backend.Set(ctx, scope, key, w); err != nil {
		return nil, err
	}
	return &Entry{Key: key, Value: w.Value, UpdatedAt: w.UpdatedAt, UpdatedByRun: w.UpdatedByRun,
		UpdatedByTry: w.UpdatedByTry, ExpiresAt: w.ExpiresAt, NeverExpire: w.NeverExpire, UpdatedBy: by}, nil
}

// Delete removes key from scope; an absent key is not an error.
func (s *Service) Delete(ctx context.Context, scope Scope, key string) error {
	if err := statevalue.CheckKey(key); err != nil {
		return err
	}
	return s.backend.Delete(ctx, scope, key)
}

// Clear removes every key of scope (of every map index of the task with
// allMapIndices).
func (s *Service) Clear(ctx context.Context, scope Scope, allMapIndices bool) error {
	return s.backend.Clear(ctx, scope, allMapIndices)
}

// List returns task-state entries with their metadata (SPEC TS-6).
func (s *Service) List(ctx context.Context, p *store.TaskStateListParams) ([]store.TaskStateEntry, error) {
	return s.st.TaskStateList(ctx, p)
}
