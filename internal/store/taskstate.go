package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// TaskStateStore holds task state (AIP-103): JSON values under string keys,
// scoped to one task instance (dag, run, task, map index) and shared by every
// try of it (SPEC TS-1). Values arrive validated and normalized by package
// statestore; the store checks only that they are JSON.
type TaskStateStore interface {
	// TaskStateSet writes (or overwrites) one key with its metadata.
	// ErrNotFound when the scope's DAG run does not exist.
	TaskStateSet(ctx context.Context, p *TaskStateSetParams) error
	// TaskStateGet returns one entry or ErrNotFound.
	TaskStateGet(ctx context.Context, scope TaskStateScope, key string) (*TaskStateEntry, error)
	// TaskStateList lists entries by dag, run, task, map index and key.
	TaskStateList(ctx context.Context, p *TaskStateListParams) ([]TaskStateEntry, error)
	// TaskStateDelete deletes one key (Key set) or every key of the scope
	// (Key empty; of every map index with AllMapIndices) and returns how
	// many rows went. Deleting what is absent is not an error.
	TaskStateDelete(ctx context.Context, p *TaskStateDeleteParams) (int64, error)
	// TaskStateExpired lists up to limit entries (0 = all) whose non-null
	// expires_at is before before, by dag, run, task, map index and key.
	// Never-expire entries are never listed.
	TaskStateExpired(ctx context.Context, before time.Time, limit int) ([]TaskStateEntry, error)
	// TaskStateDeleteExpired deletes up to limit entries (0 = all, in one
	// statement) whose non-null expires_at is before before, and returns how
	// many went. Outside a transaction each call commits on its own, so a
	// caller looping over batches commits once per batch.
	TaskStateDeleteExpired(ctx context.Context, before time.Time, limit int) (int64, error)
	// TaskStateTry returns the task-state scope, try number and state of
	// the try whose task-instance id is id (the Execution API's check of a
	// try's token on every task-state call: one narrow read instead of the
	// whole task instance); ErrNotFound when id is not a current try.
	TaskStateTry(ctx context.Context, id string) (*TaskStateTry, error)
}

// TaskStateTry is what TaskStateTry returns.
type TaskStateTry struct {
	Scope     TaskStateScope
	TryNumber int
	State     core.TIState
}

// TaskStateScope is one task instance: the scope of its task state.
// MapIndex is -1 for an unmapped task.
type TaskStateScope struct {
	DagID    string
	RunID    string
	TaskID   string
	MapIndex int
}

// TaskStateEntry is one stored key with its metadata (SPEC TS-6).
type TaskStateEntry struct {
	TaskStateScope
	Key   string
	Value json.RawMessage
	// UpdatedAt is when the value was last written.
	UpdatedAt time.Time
	// UpdatedByRun and UpdatedByTry name the run and try number of the task
	// try that wrote the value; "" and 0 when a user wrote it through the
	// REST API or the CLI (the audit log names the user).
	UpdatedByRun string
	UpdatedByTry int
	// ExpiresAt is when cleanup may delete the entry; nil = no expiry.
	ExpiresAt *time.Time
	// NeverExpire marks entries written with the never-expire retention.
	NeverExpire bool
}

// TaskStateSetParams writes one key.
type TaskStateSetParams struct {
	Scope        TaskStateScope
	Key          string
	Value        json.RawMessage
	Now          time.Time
	UpdatedByRun string
	UpdatedByTry int
	ExpiresAt    *time.Time
	NeverExpire  bool
}

// TaskStateListParams filters TaskStateList. DagID is required.
type TaskStateListParams struct {
	DagID    string
	RunID    string // "" = every run
	TaskID   string // "" = every task
	MapIndex *int   // nil = every map index
}

// TaskStateDeleteParams deletes one key or clears a scope.
type TaskStateDeleteParams struct {
	Scope TaskStateScope
	// Key is the key to delete; "" clears every key of the scope.
	Key string
	// AllMapIndices widens a clear to every map index of the task in the
	// run (Scope.MapIndex is then ignored).
	AllMapIndices bool
}
