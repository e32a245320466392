package template

import (
	"encoding/json"

	"github.com/weirflow/weir/internal/core"
)

// EnvTriggeringAssetEvents carries the events that created an
// asset-triggered run to a task process, as a JSON array (left out when
// over 128 KiB, like any variable).
const EnvTriggeringAssetEvents = "WEIR_TRIGGERING_ASSET_EVENTS"

// AddEvents puts the events that created the run into a template context
// (Context) as .triggering_asset_events, Airflow's name: one map per event
// with id, asset, uri, partition_key, partition_date, extra (decoded),
// source_kind, source_dag_id, source_run_id, source_task_id, source_user
// and timestamp. Env then passes them as EnvTriggeringAssetEvents.
func AddEvents(ctx map[string]any, events []core.AssetEvent) {
	list := make([]map[string]any, len(events))
	for i := range events {
		ev := &events[i]
		m := map[string]any{"id": ev.ID, "asset": ev.Name, "uri": ev.URI, "partition_key": "",
			"extra": decodeObject(ev.Extra), "source_kind": ev.SourceKind, "source_dag_id": ev.SourceDagID,
			"source_run_id": ev.SourceRunID, "source_task_id": ev.SourceTaskID, "source_user": ev.SourceUser,
			"timestamp": Time{ev.Timestamp.UTC()}}
		if ev.PartitionKey != nil {
			m["partition_key"] = *ev.PartitionKey
		}
		if ev.PartitionDate != nil {
			m["partition_date"] = Time{ev.PartitionDate.UTC()}
		}
		list[i] = m
	}
	ctx["triggering_asset_events"] = list
	if b, err := json.Marshal(events); err == nil && len(events) > 0 {
		ctx[envEventsKey] = string(b)
	}
}

// envEventsKey holds the events' JSON in a context for Env.
const envEventsKey = "__triggering_asset_events_json"
