-- +goose Up
-- Partitioned asset-triggered runs (docs/emission.md#consumers): how a DAG
-- turns queued events into runs (NULL = coalesce; per_partition or
-- per_event), the partition key a run is for, and the event-by-event queue
-- of partitioned DAGs (a coalescing DAG keeps one range per asset in
-- asset_dag_run_queue). partition_key is '' for an event without one.
ALTER TABLE dag ADD COLUMN asset_runs TEXT;
ALTER TABLE dag_run ADD COLUMN partition_key TEXT;
CREATE TABLE asset_event_queue (
    target_dag_id TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    event_id      BIGINT NOT NULL REFERENCES asset_event (id) ON DELETE CASCADE,
    asset_id      BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    partition_key TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (target_dag_id, event_id)
);
CREATE INDEX asset_event_queue_partition ON asset_event_queue (target_dag_id, partition_key, event_id);

-- +goose Down
DROP TABLE asset_event_queue;
ALTER TABLE dag_run DROP COLUMN partition_key;
ALTER TABLE dag DROP COLUMN asset_runs;
