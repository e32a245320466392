package sqlstore

import (
	"database/sql"
	"encoding/json"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// taskStateTable is task state's table, task_state_store: one row per
// (task instance, key), shared by every try, with an expiry. A row records
// the run and try of the task writer; a row without one was written by a
// user (the audit log names whom).
var taskStateTable = stateTable{
	cols: taskStateCols, from: taskStateFrom,
	order: orderSpec{order: store.TaskStateOrder, def: taskStateOrder,
		key: []string{"dag_id", "run_id", "task_id", "map_index", "key"},
		cols: map[string]string{"dag_id": "dag_id", "dag_run_id": "run_id", "task_id": "task_id", "map_index": "map_index",
			"key": "key", "updated_at": "updated_at", "expires_at": "expires_at"},
		nullable: []string{"expires_at"}},
	get:   qTaskStateGet,
	stale: qTaskStateExpired, deleteStale: qTaskStateDeleteExpired, deleteStaleBatch: qTaskStateDeleteExpiredBatch,
	scopeArgs: taskScopeArgs,
	set: func(p *store.StateSetParams) (string, []any, error) {
		args, err := taskScopeArgs(p.Scope)
		if err != nil {
			return "", nil, err
		}
		run, try := "", 0
		if p.By.Kind == core.StateWriterTask {
			run, try = p.By.RunID, p.By.TryNumber
		}
		return qTaskStateSet, append(args, p.Key, string(p.Value), micros(p.Now), run, try,
			nullMicros(p.ExpiresAt), p.NeverExpire), nil
	},
	del: func(p *store.StateDeleteParams) (string, []any, error) {
		args, err := taskScopeArgs(p.Scope)
		switch {
		case err != nil:
			return "", nil, err
		case p.Key != "":
			return qTaskStateDelete, append(args, p.Key), nil
		case p.AllMapIndices:
			return qTaskStateClearAllMapIndices, args[:3], nil
		}
		return qTaskStateClear, args, nil
	},
	filter: func(b *builder, p *store.StateListParams) error {
		if p.DagID == "" {
			return errDagRequired
		}
		b.where("dag_id = ?", p.DagID)
		if p.RunID != "" {
			b.where("run_id = ?", p.RunID)
		}
		if p.TaskID != "" {
			b.where("task_id = ?", p.TaskID)
		}
		if p.MapIndex != nil {
			b.where("map_index = ?", *p.MapIndex)
		}
		return nil
	},
	scan: scanTaskState,
}

// errDagRequired refuses a task-state list without a dag.
var errDagRequired = invalidf("a dag id is required")

// taskScopeArgs returns dag, run, task and map index.
func taskScopeArgs(sc core.StateScope) ([]any, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return []any{sc.DagID, sc.RunID, sc.TaskID, sc.MapIndex}, nil
}

// scanTaskState reads one row in taskStateCols order.
func scanTaskState(r scanner) (core.StateEntry, error) {
	var (
		e       = core.StateEntry{Scope: core.StateScope{Kind: core.StateTask}}
		sc      = &e.Scope
		value   string
		updated int64
		byRun   string
		byTry   int
		expires sql.NullInt64
	)
	err := r.Scan(&sc.DagID, &sc.RunID, &sc.TaskID, &sc.MapIndex, &e.Key, &value, &updated, &byRun, &byTry,
		&expires, &e.NeverExpire)
	e.Value = json.RawMessage(value)
	e.UpdatedAt = fromMicros(updated)
	e.ExpiresAt = ptrMicros(expires)
	e.UpdatedBy = core.UserWriter("")
	if byRun != "" {
		e.UpdatedBy = core.StateWriter{Kind: core.StateWriterTask, DagID: sc.DagID, RunID: byRun, TaskID: sc.TaskID,
			MapIndex: sc.MapIndex, TryNumber: byTry}
	}
	return e, err
}
