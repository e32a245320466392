package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// StateStore holds state (docs/task-state.md, docs/asset-state.md): JSON
// values under string keys, in scopes of several kinds (core.StateScope),
// one table per kind. Values arrive validated and normalized by package
// statestore; the store checks only that they are JSON, that the scope
// names something and that the writer kind is known.
type StateStore interface {
	// StateSet writes (or overwrites) one key with its writer and expiry.
	// ErrNotFound when the scope's run or asset does not exist; ErrInvalid
	// for a value that is not JSON, an unknown writer kind, or an expiry
	// on a kind without retention.
	StateSet(ctx context.Context, p *StateSetParams) error
	// StateGet returns one entry or ErrNotFound.
	StateGet(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error)
	// StateList returns one page of the entries p selects, in p.OrderBy's
	// order (StateOrder; default: by scope, then key).
	StateList(ctx context.Context, p *StateListParams) ([]core.StateEntry, error)
	// StateCount counts every entry p selects (its Page is ignored).
	StateCount(ctx context.Context, p *StateListParams) (int, error)
	// StateDelete deletes one key (Key set) or every key of the scope (Key
	// empty; of every map index of a task with AllMapIndices) and returns
	// how many rows went. Deleting what is absent is not an error.
	StateDelete(ctx context.Context, p *StateDeleteParams) (int64, error)
	// StateStale lists up to p.Limit entries (0 = all) of p.Kind that
	// cleanup deletes, by scope and key: task state whose non-null
	// expires_at is before p.Before (never-expire entries never), asset
	// state of assets inactive since before p.Before.
	StateStale(ctx context.Context, p *StateStaleParams) ([]core.StateEntry, error)
	// StateDeleteStale deletes up to p.Limit (0 = all, in one statement)
	// of the entries StateStale lists and returns how many went. Outside a
	// transaction each call commits on its own, so a caller looping over
	// batches commits once per batch.
	StateDeleteStale(ctx context.Context, p *StateStaleParams) (int64, error)
	// StateTry returns the task-state scope, try number, state and DAG
	// version of the try whose task-instance id is id: what the Execution
	// API checks of a try's token on every state call (one narrow read
	// instead of the whole task instance). ErrNotFound when id is not a
	// current try.
	StateTry(ctx context.Context, id string) (*StateTry, error)
}

// StateTry is what StateTry returns.
type StateTry struct {
	Scope        core.StateScope // a task scope
	TryNumber    int
	State        core.TIState
	DagVersionID int64
}

// StateSetParams writes one key.
type StateSetParams struct {
	Scope core.StateScope
	Key   string
	Value json.RawMessage
	Now   time.Time
	By    core.StateWriter
	// ExpiresAt and NeverExpire are task state's retention.
	ExpiresAt   *time.Time
	NeverExpire bool
	// Object, when set, is the object reference the value holds: its
	// reservation (StateObjectReserve) is consumed in the same
	// transaction, and ErrConflict (nothing written) when it is gone or a
	// sweeper has claimed it.
	Object string
}

// StateObjects tracks the objects of the worker-side state backend
// (docs/state-backends.md#sweeping): references the server issued for a
// write in flight, and references whose row went — the store records
// those itself, whatever statement removed or overwrote the row. Workers
// holding the backend claim due references, delete their objects and
// report them done.
type StateObjects interface {
	// StateObjectReserve records ref as issued for a write, due for the
	// sweep at due unless a StateSet with Object = ref consumes it first.
	StateObjectReserve(ctx context.Context, ref string, due time.Time) error
	// StateObjectClaim leases up to p.Limit due references until
	// p.Now + p.Lease (a lapsed lease may be claimed again) and returns them.
	StateObjectClaim(ctx context.Context, p *StateObjectClaimParams) ([]string, error)
	// StateObjectDone forgets references whose objects are deleted.
	StateObjectDone(ctx context.Context, refs []string) error
	// StateObjectPending counts references not yet swept (due or not).
	StateObjectPending(ctx context.Context) (int, error)
}

// StateObjectClaimParams are StateObjectClaim's.
type StateObjectClaimParams struct {
	Now   time.Time
	Limit int
	Lease time.Duration
}

// The orders of the state lists (store.Order): the fields are the JSON
// names of a core.StateEntry and its scope.
var (
	TaskStateOrder = Order{List: "task state", Default: "dag_id, dag_run_id, task_id, map_index, then key",
		Fields: []string{"key", "updated_at", "expires_at", "dag_id", "dag_run_id", "task_id", "map_index"}}
	AssetStateOrder = Order{List: "asset state", Default: "asset_name, then key",
		Fields: []string{"key", "updated_at", "asset_name"}}
)

// StateOrder is the order of kind's lists.
func StateOrder(kind core.StateKind) Order {
	if kind == core.StateAsset {
		return AssetStateOrder
	}
	return TaskStateOrder
}

// StateListParams selects entries of one kind. Task state: DagID is
// required; RunID, TaskID ("" = any) and MapIndex (nil = any) narrow it.
// Asset state: AssetID narrows it to one asset (0 = every asset).
type StateListParams struct {
	Kind     core.StateKind
	DagID    string
	RunID    string
	TaskID   string
	MapIndex *int
	AssetID  int64
	// Page's OrderBy is one of TaskStateOrder's or AssetStateOrder's
	// fields.
	Page
}

// ListScope returns the list of exactly the entries of scope (an asset
// scope resolved to its id), one page at a time.
func ListScope(scope core.StateScope, page Page) *StateListParams {
	p := &StateListParams{Kind: scope.Kind, Page: page}
	switch scope.Kind {
	case core.StateTask:
		mi := scope.MapIndex
		p.DagID, p.RunID, p.TaskID, p.MapIndex = scope.DagID, scope.RunID, scope.TaskID, &mi
	case core.StateAsset:
		p.AssetID = scope.AssetID
	}
	return p
}

// StateDeleteParams deletes one key or clears a scope.
type StateDeleteParams struct {
	Scope core.StateScope
	// Key is the key to delete; "" clears every key of the scope.
	Key string
	// AllMapIndices widens a clear of a task scope to every map index of
	// the task in the run (Scope.MapIndex is then ignored).
	AllMapIndices bool
	// KeepWatchers keeps, in a clear of an asset scope, the keys of the
	// asset's watchers (core.WatcherKeyPrefix): a task's clear.
	KeepWatchers bool
}

// StateStaleParams selects what cleanup deletes of one kind (StateStale).
type StateStaleParams struct {
	Kind   core.StateKind
	Before time.Time
	Limit  int
}
