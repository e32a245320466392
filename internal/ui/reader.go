package ui

import (
	"context"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Reader is what the UI's pages read from the store (package store
// documents each method): reads only, since every change goes through the
// service layer. Every store.Store satisfies it.
type Reader interface {
	AssetCount(ctx context.Context, p *store.AssetListParams) (int, error)
	AssetEventCount(ctx context.Context, p *store.AssetEventListParams) (int, error)
	AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, error)
	AssetGet(ctx context.Context, id int64) (*core.AssetModel, error)
	AssetList(ctx context.Context, p *store.AssetListParams) ([]core.AssetModel, error)
	CallbackCount(ctx context.Context, p *store.CallbackListParams) (int, error)
	CallbackGet(ctx context.Context, id int64) (*core.Callback, error)
	CallbackList(ctx context.Context, p *store.CallbackListParams) ([]core.Callback, error)
	AuditLogCount(ctx context.Context, p *store.AuditLogListParams) (int, error)
	AuditLogList(ctx context.Context, p *store.AuditLogListParams) ([]core.AuditEntry, error)
	ConnectionCount(ctx context.Context, p *store.ConnectionListParams) (int, error)
	ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, error)
	DagCount(ctx context.Context, p *store.DagListParams) (int, error)
	DagGet(ctx context.Context, dagID string) (*core.DagModel, error)
	DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error)
	DagRunCount(ctx context.Context, p *store.DagRunListParams) (int, error)
	DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error)
	DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, error)
	DagRunRecent(ctx context.Context, p *store.DagRunRecentParams) ([]core.DagRun, error)
	DagVersionLatest(ctx context.Context, dagID string) (*core.DagVersion, error)
	ImportErrorCount(ctx context.Context, p *store.ImportErrorListParams) (int, error)
	ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, error)
	JobList(ctx context.Context) ([]core.Job, error)
	PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, error)
	StreamGet(ctx context.Context, id string) (*core.Stream, error)
	TaskInstanceCount(ctx context.Context, p *store.TaskInstanceListParams) (int, error)
	TaskInstanceGetByKey(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error)
	TaskInstanceHistory(ctx context.Context, dagID, runID, taskID string, mapIndex int) ([]core.TaskInstance, error)
	TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error)
	TaskInstanceStateCounts(ctx context.Context, dagRunIDs []int64, taskIDs ...string) ([]store.TaskInstanceStateCount, error)
	TriggerGet(ctx context.Context, id int64) (*core.Trigger, error)
	UserGet(ctx context.Context, username string) (*core.User, error)
	UserCount(ctx context.Context, p *store.UserListParams) (int, error)
	UserList(ctx context.Context, p *store.UserListParams) ([]core.User, error)
	APITokenList(ctx context.Context) ([]core.APIToken, error)
	XComCount(ctx context.Context, p *store.XComListParams) (int, error)
	XComList(ctx context.Context, p *store.XComListParams) ([]core.XCom, error)
	XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error)
}
