package template

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Time is a timestamp in the template context. It prints in ISO 8601 like
// Airflow's pendulum values ("2024-01-01T00:00:00+00:00") and keeps
// time.Time's methods, so {{ .logical_date.Format "2006-01" }} works.
type Time struct{ time.Time }

// String formats the time as ISO 8601 with a numeric offset.
func (t Time) String() string { return t.Format("2006-01-02T15:04:05-07:00") }

// Context builds the template context of one task try. params are the
// DAG's parameter defaults; the run's conf overrides them key by key (as
// Airflow does), and is also available whole as .conf.
//
// Dates are in UTC, as in Airflow. A run without a logical date (a manual
// run triggered without one) uses its data interval start, else the time it
// was queued; a missing data interval falls back to the logical date.
func Context(run *core.DagRun, ti *core.TaskInstance, params map[string]any) map[string]any {
	conf := decodeObject(run.Conf)
	merged := make(map[string]any, len(params)+len(conf))
	maps.Copy(merged, params)
	maps.Copy(merged, conf)

	logical := run.QueuedAt
	switch {
	case run.LogicalDate != nil:
		logical = *run.LogicalDate
	case run.DataIntervalStart != nil:
		logical = *run.DataIntervalStart
	}
	logical = logical.UTC()
	start, end := logical, logical
	if run.DataIntervalStart != nil {
		start = run.DataIntervalStart.UTC()
	}
	if run.DataIntervalEnd != nil {
		end = run.DataIntervalEnd.UTC()
	}

	mapIndex := core.NoMapIndex
	tiCtx := map[string]any{}
	mapArgs := map[string]any{}
	if ti != nil {
		mapIndex = ti.MapIndex
		tiCtx = map[string]any{
			"id":         ti.ID,
			"dag_id":     ti.DagID,
			"run_id":     ti.RunID,
			"task_id":    ti.TaskID,
			"map_index":  ti.MapIndex,
			"try_number": ti.TryNumber,
			"max_tries":  ti.MaxTries,
			"queue":      ti.Queue,
			"pool":       ti.Pool,
		}
		mapArgs = decodeObject(ti.MapArgs)
	}
	taskID, _ := tiCtx["task_id"].(string)

	return map[string]any{
		"ds":                  logical.Format("2006-01-02"),
		"ds_nodash":           logical.Format("20060102"),
		"ts":                  Time{logical}.String(),
		"ts_nodash":           logical.Format("20060102T150405"),
		"ts_nodash_with_tz":   logical.Format("20060102T150405-0700"),
		"logical_date":        Time{logical},
		"data_interval_start": Time{start},
		"data_interval_end":   Time{end},
		"run_id":              run.RunID,
		"dag_id":              run.DagID,
		"partition_key":       PartitionKey(run),
		"task_id":             taskID,
		"map_index":           mapIndex,
		"map_args":            mapArgs,
		"params":              merged,
		// The asset events that created the run (WithEvents); none by default.
		"triggering_asset_events": []map[string]any{},
		"conf":                    conf,
		"ti":                      tiCtx,
		"dag_run": map[string]any{
			"run_id":        run.RunID,
			"dag_id":        run.DagID,
			"run_type":      string(run.RunType),
			"logical_date":  Time{logical},
			"conf":          conf,
			"partition_key": PartitionKey(run),
		},
	}
}

// PartitionKey returns the partition a run is for, "" for none
// (.partition_key).
func PartitionKey(run *core.DagRun) string {
	if run.PartitionKey == nil {
		return ""
	}
	return *run.PartitionKey
}

// WithEvents adds the asset events that created the run to a template
// context (Context's) as .triggering_asset_events: for each, id, asset
// (its name), uri, extra (decoded), partition_key ("" = none),
// partition_date ("" = none), source_kind, source_watcher, source_user
// ("" unless posted through the API), source_dag_id, source_run_id,
// source_task_id ("" when no task emitted it), source_callback_id (0 unless
// a callback's notifier emitted it) and timestamp; and
// .triggering_asset_events_total, how many events the run consumed (the
// list may hold fewer: execapi.MaxTriggeringEvents).
func WithEvents(ctx map[string]any, events []core.AssetEvent, total int) map[string]any {
	list := make([]map[string]any, 0, len(events))
	for _, e := range events {
		part := ""
		if e.PartitionKey != nil {
			part = *e.PartitionKey
		}
		list = append(list, map[string]any{"id": e.ID, "asset": e.Name, "uri": e.URI, "extra": decodeObject(e.Extra),
			"partition_key": part, "source_kind": e.SourceKind, "source_watcher": e.SourceWatcher,
			"partition_date": "", "source_user": e.SourceUser, "timestamp": Time{e.Timestamp.UTC()},
			"source_dag_id": e.SourceDagID, "source_run_id": e.SourceRunID, "source_task_id": e.SourceTaskID,
			"source_callback_id": e.SourceCallbackID})
		if e.PartitionDate != nil {
			list[len(list)-1]["partition_date"] = Time{e.PartitionDate.UTC()}
		}
	}
	ctx["triggering_asset_events"] = list
	ctx["triggering_asset_events_total"] = max(total, len(events))
	return ctx
}

// decodeObject decodes a JSON object, or returns an empty map for anything
// else (absent, null, or not an object).
func decodeObject(raw json.RawMessage) map[string]any {
	out := map[string]any{}
	if len(raw) == 0 {
		return out
	}
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		return map[string]any{}
	}
	return out
}
