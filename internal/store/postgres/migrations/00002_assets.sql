-- +goose Up
-- Assets (docs/assets.md). An asset is active while some active DAG defines
-- it; inactive_since records when the last one stopped (SPEC AS-5).
CREATE TABLE asset (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    uri            TEXT NOT NULL UNIQUE,
    "group"        TEXT NOT NULL,
    extra          TEXT NOT NULL DEFAULT '{}',
    active         BOOLEAN NOT NULL DEFAULT TRUE,
    inactive_since BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE TABLE asset_alias (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

-- Which assets each DAG's latest version defines.
CREATE TABLE dag_asset (
    dag_id   TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    asset_id BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    PRIMARY KEY (dag_id, asset_id)
);
CREATE INDEX dag_asset_asset ON dag_asset (asset_id);

-- Which DAG is scheduled on which asset (Airflow's dag_schedule_asset_reference).
CREATE TABLE dag_schedule_asset (
    dag_id   TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    asset_id BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    PRIMARY KEY (dag_id, asset_id)
);
CREATE INDEX dag_schedule_asset_asset ON dag_schedule_asset (asset_id);

-- The concrete inlets and outlets of each task of a DAG's latest version.
CREATE TABLE task_inlet_asset (
    dag_id   TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    task_id  TEXT NOT NULL,
    asset_id BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    PRIMARY KEY (dag_id, task_id, asset_id)
);
CREATE INDEX task_inlet_asset_asset ON task_inlet_asset (asset_id);
CREATE TABLE task_outlet_asset (
    dag_id   TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    task_id  TEXT NOT NULL,
    asset_id BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    PRIMARY KEY (dag_id, task_id, asset_id)
);
CREATE INDEX task_outlet_asset_asset ON task_outlet_asset (asset_id);

CREATE TABLE asset_event (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    asset_id          BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    extra             TEXT NOT NULL DEFAULT '{}',
    partition_key     TEXT,
    source_kind       TEXT NOT NULL,
    source_dag_id     TEXT,
    source_run_id     TEXT,
    source_task_id    TEXT,
    source_map_index  INTEGER NOT NULL DEFAULT -1,
    source_try_number INTEGER NOT NULL DEFAULT 0,
    timestamp         BIGINT NOT NULL
);
-- Consumers read an asset's events in id order.
CREATE INDEX asset_event_asset ON asset_event (asset_id, id);
CREATE INDEX asset_event_source ON asset_event (source_dag_id, source_run_id, source_task_id);

-- Airflow's ADRQ: per consumer DAG and asset, the unconsumed events (ids
-- first_event_id..event_id of that asset) waiting for an asset-triggered run.
CREATE TABLE asset_dag_run_queue (
    asset_id       BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    target_dag_id  TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    first_event_id BIGINT NOT NULL,
    event_id       BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (asset_id, target_dag_id)
);
CREATE INDEX asset_dag_run_queue_dag ON asset_dag_run_queue (target_dag_id);

-- The events an asset-triggered run consumed (Airflow's dagrun_asset_event).
CREATE TABLE dag_run_asset_event (
    dag_run_id BIGINT NOT NULL REFERENCES dag_run (id) ON DELETE CASCADE,
    event_id   BIGINT NOT NULL REFERENCES asset_event (id) ON DELETE CASCADE,
    PRIMARY KEY (dag_run_id, event_id)
);

-- +goose Down
DROP TABLE dag_run_asset_event;
DROP TABLE asset_dag_run_queue;
DROP TABLE asset_event;
DROP TABLE task_outlet_asset;
DROP TABLE task_inlet_asset;
DROP TABLE dag_schedule_asset;
DROP TABLE dag_asset;
DROP TABLE asset_alias;
DROP TABLE asset;
