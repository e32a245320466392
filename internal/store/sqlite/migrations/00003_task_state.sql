-- +goose Up
-- Task state (AIP-103, SPEC TS-1..TS-7): one row per (task instance, key),
-- shared by every try of the instance. expires_at is computed by the writer
-- at write time (NULL = no expiry); never_expire marks rows written with
-- "never", which cleanup skips unconditionally.
CREATE TABLE task_state_store (
    id             INTEGER PRIMARY KEY,
    dag_run_id     BIGINT NOT NULL REFERENCES dag_run (id) ON DELETE CASCADE,
    dag_id         TEXT NOT NULL,
    run_id         TEXT NOT NULL,
    task_id        TEXT NOT NULL,
    map_index      INTEGER NOT NULL DEFAULT -1,
    key            VARCHAR(512) NOT NULL,
    value          TEXT NOT NULL,
    updated_at     BIGINT NOT NULL,
    updated_by_run TEXT NOT NULL DEFAULT '',
    updated_by_try INTEGER NOT NULL DEFAULT 0,
    expires_at     BIGINT,
    never_expire   BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (dag_run_id, task_id, map_index, key)
);
CREATE INDEX task_state_store_expires ON task_state_store (expires_at);
CREATE INDEX task_state_store_key ON task_state_store (dag_id, run_id, task_id, map_index);

-- +goose Down
DROP TABLE task_state_store;
