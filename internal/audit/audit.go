// Package audit writes the audit log: one entry per administrative change,
// in one shape whoever makes it (REST API, UI, admin CLI). Services call
// Record inside the transaction of the change they record, so a change and
// its entry commit together.
package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Actions recorded in the audit log.
const (
	DagPause          = "dag.pause"
	DagUnpause        = "dag.unpause"
	DagRunTrigger     = "dag_run.trigger"
	DagRunClear       = "dag_run.clear"
	DagRunMark        = "dag_run.mark"
	TaskInstanceClear = "task_instance.clear"
	TaskInstanceMark  = "task_instance.mark"
	AssetEventCreate  = "asset_event.create"
	AssetQueueClear   = "asset_queue.clear"
	TaskStateSet      = "task_state.set"
	TaskStateDelete   = "task_state.delete"
	TaskStateClear    = "task_state.clear"
	AssetStateSet     = "asset_state.set"
	AssetStateDelete  = "asset_state.delete"
	AssetStateClear   = "asset_state.clear"
	PoolCreate        = "pool.create"
	PoolUpdate        = "pool.update"
	PoolDelete        = "pool.delete"
	ConnectionCreate  = "connection.create"
	ConnectionUpdate  = "connection.update"
	ConnectionDelete  = "connection.delete"
	VariableCreate    = "variable.create"
	VariableUpdate    = "variable.update"
	VariableDelete    = "variable.delete"
	UserUpsert        = "user.upsert"
	UserCreate        = "user.create"
	UserUpdate        = "user.update"
	UserDelete        = "user.delete"
	APITokenCreate    = "api_token.create"
	APITokenRevoke    = "api_token.revoke"
	// WorkerRevoke is the revocation of a worker's credentials.
	WorkerRevoke = "worker_credential.revoke"
	AuthLogin    = "auth.login"
)

// Actions on backfills and DAGs' metadata (docs/backfills.md).
const (
	BackfillCreate  = "backfill.create"
	BackfillPause   = "backfill.pause"
	BackfillUnpause = "backfill.unpause"
	BackfillCancel  = "backfill.cancel"
	DagDelete       = "dag.delete"
	DagRunDelete    = "dag_run.delete"
)

// Writer is the store method Record needs.
type Writer interface {
	AuditLogAdd(ctx context.Context, e *core.AuditEntry) error
}

// Record appends one entry: actor did action to target (detail says how).
// Changes by core.System are not recorded.
func Record(ctx context.Context, w Writer, now time.Time, actor core.Actor, action, target, detail string) error {
	if actor.IsSystem() {
		return nil
	}
	e := &core.AuditEntry{When: now, User: actor.Name, Action: action, Target: target, Detail: detail}
	if err := w.AuditLogAdd(ctx, e); err != nil {
		return fmt.Errorf("audit %s of %s: %w", action, target, err)
	}
	return nil
}
