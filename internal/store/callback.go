package store

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// CallbackStore holds fired callbacks: work items written with the state
// change that fires them and claimed by workers (docs/emission.md#callbacks).
type CallbackStore interface {
	// CallbackInsert records fired callbacks as queued. Call it in the
	// transaction of the compare-and-set state change that fires them (a
	// replayed change then fires nothing); it notifies ChannelCallbacks.
	CallbackInsert(ctx context.Context, cbs []core.Callback, now time.Time) error
	// CallbackClaim marks up to p.Limit queued callbacks, oldest first, as
	// running for p.WorkerID and counts an attempt for each; concurrent
	// claimers take disjoint rows.
	CallbackClaim(ctx context.Context, p *CallbackClaimParams) ([]core.Callback, error)
	// CallbackGet returns one callback or ErrNotFound.
	CallbackGet(ctx context.Context, id int64) (*core.Callback, error)
	// CallbackHeartbeat records that the worker running attempt (a claim:
	// the callback's attempts count when claimed) of callback id is alive;
	// ErrConflict when that attempt is no longer running (the callback
	// ended, or was queued again and claimed anew).
	CallbackHeartbeat(ctx context.Context, id int64, attempt int, now time.Time) error
	// CallbackFinish ends a running attempt of a callback as success or
	// failed; ErrConflict when that attempt is no longer running.
	CallbackFinish(ctx context.Context, p *CallbackFinishParams) error
	// CallbackRequeueStale finds running callbacks whose heartbeat is older
	// than p.Before: those with attempts left go back to queued, the others
	// fail with an error saying their worker stopped. It returns how many
	// were requeued and failed.
	CallbackRequeueStale(ctx context.Context, p *CallbackStaleParams) (requeued, failed int, err error)
	// CallbackList lists a run's callbacks (CallbackOrder); CallbackCount
	// counts them.
	CallbackList(ctx context.Context, p *CallbackListParams) ([]core.Callback, error)
	CallbackCount(ctx context.Context, p *CallbackListParams) (int, error)
}

// CallbackClaimParams selects what CallbackClaim takes.
type CallbackClaimParams struct {
	WorkerID string
	Limit    int
	Now      time.Time
	// DagRunID, when not 0, takes that run's callbacks only: a worker
	// confined to one run, `weir dags test`'s.
	DagRunID int64
}

// CallbackFinishParams ends a running callback.
type CallbackFinishParams struct {
	ID      int64
	Attempt int                // the claim's attempt
	State   core.CallbackState // success or failed
	Error   string
	Now     time.Time
}

// CallbackStaleParams selects the callbacks of dead workers.
type CallbackStaleParams struct {
	Before      time.Time // a running callback's heartbeat older than this is stale
	MaxAttempts int       // a stale callback with this many attempts fails
	Now         time.Time
}

// CallbackListParams filters CallbackList.
type CallbackListParams struct {
	DagRunID int64
	// TaskID, when set, keeps a task's callbacks; "" = every callback of
	// the run (DAG-level ones too).
	TaskID string
	// States keeps the callbacks in one of them (empty = any).
	States []core.CallbackState
	Page
}
