-- +goose Up
-- Asset aliases resolved at run time (docs/assets.md#aliases). A running
-- task adds concrete assets to an alias it declares as an outlet; the
-- additions wait in task_instance_alias_event until the try finishes: on
-- success each becomes an asset event and the alias<->asset association
-- below, in the success transaction; on any other end they are dropped.
CREATE TABLE asset_alias_asset (
    alias_id            BIGINT NOT NULL REFERENCES asset_alias (id) ON DELETE CASCADE,
    asset_id            BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    first_associated_at BIGINT NOT NULL,
    last_associated_at  BIGINT NOT NULL,
    PRIMARY KEY (alias_id, asset_id)
);
CREATE INDEX asset_alias_asset_asset ON asset_alias_asset (asset_id);

-- Which DAG is scheduled on which alias (Airflow's
-- dag_schedule_asset_alias_reference).
CREATE TABLE dag_schedule_asset_alias (
    dag_id   TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    alias_id BIGINT NOT NULL REFERENCES asset_alias (id) ON DELETE CASCADE,
    PRIMARY KEY (dag_id, alias_id)
);
CREATE INDEX dag_schedule_asset_alias_alias ON dag_schedule_asset_alias (alias_id);

-- A running try's additions to its alias outlets, one per (alias, asset);
-- adding again replaces the extra.
CREATE TABLE task_instance_alias_event (
    ti_id      UUID NOT NULL REFERENCES task_instance (id) ON DELETE CASCADE,
    alias_id   BIGINT NOT NULL REFERENCES asset_alias (id) ON DELETE CASCADE,
    asset_id   BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    extra      TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (ti_id, alias_id, asset_id)
);

-- +goose Down
DROP TABLE task_instance_alias_event;
DROP TABLE dag_schedule_asset_alias;
DROP TABLE asset_alias_asset;
