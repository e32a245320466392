package sqlstore

import "github.com/weirflow/weir/internal/store"

// The columns behind each list's documented order fields (store.Order), in
// the style of queries.go. Every default order is index-backed; an order by
// another field sorts the filtered rows in the database (a top-N sort).

var (
	dagOrder = orderSpec{order: store.DagOrder, def: "dag_id", key: []string{"dag_id"},
		cols: map[string]string{"dag_id": "dag_id", "is_paused": "is_paused", "fileloc": "fileloc",
			"timetable_summary": "timetable_summary", "last_parsed_time": "last_parsed_time",
			"next_dagrun_run_after": "next_run_after"},
		nullable: []string{"next_dagrun_run_after"}}

	dagRunOrder = orderSpec{order: store.DagRunOrder, def: "id DESC", key: []string{"id"},
		cols: map[string]string{"id": "id", "dag_id": "dag_id", "dag_run_id": "run_id", "run_type": "run_type",
			"state": "state", "logical_date": "logical_date", "queued_at": "queued_at", "start_date": "start_date",
			"end_date": "end_date", "data_interval_start": "data_interval_start", "data_interval_end": "data_interval_end"},
		nullable: []string{"logical_date", "start_date", "end_date", "data_interval_start", "data_interval_end"}}

	// tiOrder's default walks the (dag_run_id, task_id, map_index) key,
	// or with a dag_id filter the task_instance_dag_order index.
	tiOrder = orderSpec{order: store.TaskInstanceOrder, def: "dag_run_id, task_id, map_index",
		key: []string{"dag_run_id", "task_id", "map_index"},
		cols: map[string]string{"dag_id": "dag_id", "dag_run_id": "run_id", "task_id": "task_id",
			"map_index": "map_index", "try_number": "try_number", "state": "state", "pool": "pool", "queue": "queue",
			"priority_weight": "priority_weight", "operator": "operator", "queued_dttm": "queued_at",
			"start_date": "start_date", "end_date": "end_date"},
		nullable: []string{"queued_dttm", "start_date", "end_date"}}
	// tiPriorityOrder is the scheduler's queueing order (OrderByPriority).
	tiPriorityOrder = orderSpec{order: store.TaskInstanceOrder,
		def: "priority_weight DESC, dag_run_id, map_index, task_id"}
	// unordered lets the engine return rows in whatever order is cheapest.
	unordered = orderSpec{order: store.TaskInstanceOrder}

	xcomOrder = orderSpec{order: store.XComOrder, def: "dag_run_id, task_id, map_index, key",
		key:  []string{"dag_run_id", "task_id", "map_index", "key"},
		cols: map[string]string{"task_id": "task_id", "map_index": "map_index", "key": "key", "timestamp": "timestamp"}}

	importErrorOrder = orderSpec{order: store.ImportErrorOrder, def: "filename", key: []string{"id"},
		cols: map[string]string{"import_error_id": "id", "filename": "filename", "timestamp": "timestamp"}}

	dagWarningOrder = orderSpec{order: store.DagWarningOrder, def: "dag_id, warning_type",
		key:  []string{"dag_id", "warning_type"},
		cols: map[string]string{"dag_id": "dag_id", "warning_type": "warning_type", "timestamp": "timestamp"}}

	triggerOrder = orderSpec{order: store.TriggerOrder, def: "id", key: []string{"id"},
		cols: map[string]string{"id": "id", "created_date": "created_at", "triggerer_id": "triggerer_id"}}

	poolOrder = orderSpec{order: store.PoolOrder, def: "p.pool", key: []string{"p.pool"},
		cols: map[string]string{"name": "p.pool", "slots": "p.slots"}}

	connectionOrder = orderSpec{order: store.ConnectionOrder, def: "conn_id", key: []string{"conn_id"},
		cols: map[string]string{"connection_id": "conn_id"}}

	variableOrder = orderSpec{order: store.VariableOrder, def: "key", key: []string{"key"},
		cols: map[string]string{"key": "key"}}

	userOrder = orderSpec{order: store.UserOrder, def: "username", key: []string{"username"},
		cols: map[string]string{"username": "username", "role": "role", "created_at": "created_at"}}

	auditOrder = orderSpec{order: store.AuditLogOrder, def: "id DESC", key: []string{"id"},
		cols: map[string]string{"event_log_id": "id", "when": "at", "event": "action", "owner": "username"}}

	assetOrder = orderSpec{order: store.AssetOrder, def: "name", key: []string{"id"},
		cols: map[string]string{"name": "name", "id": "id", "uri": "uri", "group": `"group"`,
			"created_at": "created_at", "updated_at": "updated_at"}}

	// assetAliasOrder qualifies its columns with al: its clause orders both
	// the page of aliases and the rows of their assets.
	assetAliasOrder = orderSpec{order: store.AssetAliasOrder, def: "al.name", key: []string{"al.id"},
		cols: map[string]string{"name": "al.name", "id": "al.id", "created_at": "al.created_at"}}

	assetEventOrder = orderSpec{order: store.AssetEventOrder, def: "e.id", key: []string{"e.id"},
		cols: map[string]string{"id": "e.id", "timestamp": "e.timestamp", "asset_id": "e.asset_id",
			"source_dag_id": "e.source_dag_id", "callback_depth": "e.callback_depth"},
		nullable: []string{"source_dag_id"}}
)
