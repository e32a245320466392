package api

import (
	"context"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// reader is what the REST API's handlers read from the store (package store documents each
// method): reads only, since every change goes through the service layer.
// *sqlstore.Store and every store.Store satisfy it.
type reader interface {
	APITokenGet(ctx context.Context, hash string) (*core.APIToken, error)
	AssetAliasCount(ctx context.Context, p *store.AssetAliasListParams) (int, error)
	AssetAliasGet(ctx context.Context, name string) (*store.AssetAlias, error)
	AssetAliasList(ctx context.Context, p *store.AssetAliasListParams) ([]store.AssetAlias, error)
	AssetCount(ctx context.Context, p *store.AssetListParams) (int, error)
	AssetEventCount(ctx context.Context, p *store.AssetEventListParams) (int, error)
	AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, error)
	AssetGet(ctx context.Context, id int64) (*core.AssetModel, error)
	AssetList(ctx context.Context, p *store.AssetListParams) ([]core.AssetModel, error)
	AssetQueueList(ctx context.Context, dagID string) ([]store.AssetQueueEntry, error)
	AuditLogCount(ctx context.Context, p *store.AuditLogListParams) (int, error)
	AuditLogList(ctx context.Context, p *store.AuditLogListParams) ([]core.AuditEntry, error)
	CallbackCount(ctx context.Context, p *store.CallbackListParams) (int, error)
	CallbackGet(ctx context.Context, id int64) (*core.Callback, error)
	CallbackList(ctx context.Context, p *store.CallbackListParams) ([]core.Callback, error)
	ConnectionCount(ctx context.Context, p *store.ConnectionListParams) (int, error)
	ConnectionGet(ctx context.Context, id string) (*core.Connection, error)
	ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, error)
	DagCount(ctx context.Context, p *store.DagListParams) (int, error)
	DagGet(ctx context.Context, dagID string) (*core.DagModel, error)
	DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error)
	DagRunCount(ctx context.Context, p *store.DagRunListParams) (int, error)
	DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error)
	DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, error)
	DagVersionLatest(ctx context.Context, dagID string) (*core.DagVersion, error)
	DagWarningCount(ctx context.Context, p *store.DagWarningListParams) (int, error)
	DagWarningList(ctx context.Context, p *store.DagWarningListParams) ([]core.DagWarning, error)
	ImportErrorCount(ctx context.Context, p *store.ImportErrorListParams) (int, error)
	ImportErrorGet(ctx context.Context, id int64) (*core.ImportError, error)
	ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, error)
	JobList(ctx context.Context) ([]core.Job, error)
	PoolCount(ctx context.Context, p *store.PoolListParams) (int, error)
	PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, error)
	TaskInstanceCount(ctx context.Context, p *store.TaskInstanceListParams) (int, error)
	TaskInstanceGetByKey(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error)
	TaskInstanceHistory(ctx context.Context, dagID, runID, taskID string, mapIndex int) ([]core.TaskInstance, error)
	TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error)
	StreamGet(ctx context.Context, id string) (*core.Stream, error)
	StreamEventList(ctx context.Context, p *store.StreamEventListParams) ([]core.StreamEvent, error)
	TriggerCount(ctx context.Context, p *store.TriggerListParams) (int, error)
	TriggerGet(ctx context.Context, id int64) (*core.Trigger, error)
	TriggerList(ctx context.Context, p *store.TriggerListParams) ([]core.Trigger, error)
	UserGet(ctx context.Context, username string) (*core.User, error)
	VariableCount(ctx context.Context, p *store.VariableListParams) (int, error)
	VariableGet(ctx context.Context, key string) (*core.Variable, error)
	VariableList(ctx context.Context, p *store.VariableListParams) ([]core.Variable, error)
	XComCount(ctx context.Context, p *store.XComListParams) (int, error)
	XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error)
	XComList(ctx context.Context, p *store.XComListParams) ([]core.XCom, error)
}
