-- +goose Up
-- Asset watchers (docs/watchers.md): a watcher is declared on an asset in a
-- DAG file (dag_id) and runs its trigger (trigger_type, trigger_kwargs) in
-- the triggerer. trigger_id is the trigger row running it now: watchers
-- whose trigger type and kwargs are equal share one row (one poll loop).
-- The cursor is not here: it is asset state (key watcher/<name>/cursor),
-- written in the transaction of the events it covers. The remaining
-- columns are the watcher's health.
CREATE TABLE asset_watcher (
    asset_id       BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    dag_id         TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    trigger_type   TEXT NOT NULL,
    trigger_kwargs TEXT NOT NULL,
    trigger_id     BIGINT REFERENCES trigger (id) ON DELETE SET NULL,
    created_at     BIGINT NOT NULL,
    last_poll_at   BIGINT,
    last_poll_ms   BIGINT NOT NULL DEFAULT 0,
    last_event_at  BIGINT,
    last_event_id  BIGINT,
    events         BIGINT NOT NULL DEFAULT 0,
    last_error     TEXT NOT NULL DEFAULT '',
    last_error_at  BIGINT,
    errors_in_row  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (asset_id, name)
);
CREATE INDEX asset_watcher_trigger ON asset_watcher (trigger_id);
CREATE INDEX asset_watcher_dag ON asset_watcher (dag_id);

ALTER TABLE asset_event ADD COLUMN source_watcher TEXT;
ALTER TABLE asset_state_store ADD COLUMN last_updated_by_watcher TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE asset_state_store DROP COLUMN last_updated_by_watcher;
ALTER TABLE asset_event DROP COLUMN source_watcher;
DROP INDEX asset_watcher_dag;
DROP INDEX asset_watcher_trigger;
DROP TABLE asset_watcher;
