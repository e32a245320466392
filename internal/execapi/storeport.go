package execapi

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// storePort is what the Execution API's handlers use of the store (package store
// documents each method): the worker's own steps (heartbeat, XCom, alias
// additions) and reads; claiming, starting and finishing a try and state go
// through their services. *sqlstore.Store and every store.Store satisfy it.
type storePort interface {
	AssetAliasEventAdd(ctx context.Context, p *store.AssetAliasEventParams) error
	AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, error)
	AssetEventCount(ctx context.Context, p *store.AssetEventListParams) (int, error)
	CallbackClaim(ctx context.Context, p *store.CallbackClaimParams) ([]core.Callback, error)
	CallbackFinish(ctx context.Context, p *store.CallbackFinishParams) error
	CallbackGet(ctx context.Context, id int64) (*core.Callback, error)
	CallbackHeartbeat(ctx context.Context, id int64, attempt int, now time.Time) error
	ConnectionGet(ctx context.Context, id string) (*core.Connection, error)
	DagVersionGet(ctx context.Context, id int64) (*core.DagVersion, error)
	DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error)
	StateTry(ctx context.Context, id string) (*store.StateTry, error)
	Subscribe(ctx context.Context, channel string) <-chan struct{}
	TaskInstanceGet(ctx context.Context, id string) (*core.TaskInstance, error)
	TaskInstanceArchived(ctx context.Context, id string) (*core.TaskInstance, error)
	VariableGet(ctx context.Context, key string) (*core.Variable, error)
	TaskInstanceHeartbeat(ctx context.Context, id string, at time.Time) error
	XComDelete(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) error
	XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error)
	XComList(ctx context.Context, p *store.XComListParams) ([]core.XCom, error)
	XComSet(ctx context.Context, x *core.XCom) error
	WorkerHeartbeat(ctx context.Context, p *store.WorkerHeartbeatParams) error
	WorkerLastBeat(ctx context.Context, workerID string) (*core.Job, error)
}
