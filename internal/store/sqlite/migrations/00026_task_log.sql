-- +goose Up
-- Where each try's log was stored (docs/deployment.md#task-logs), written
-- by the api-server that stores a log's first bytes, so that a reader
-- tells "this try wrote nothing" (no row) from "this try's log is not
-- here" (a row naming where it is). kind is the store: folder (location =
-- the api-server's host and log folder), database (chunks in
-- task_log_chunk) or remote (chunks while the try runs, then the whole log
-- as one object at location, uploaded when stored_at is set; attempts,
-- error and lease_until track its upload; pruned_at is when retention
-- deleted it, the row kept to say so).
CREATE TABLE task_log (
    log_key     TEXT PRIMARY KEY,
    dag_id      TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    map_index   INTEGER NOT NULL,
    try_number  INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    location    TEXT NOT NULL,
    size        BIGINT NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    error       TEXT NOT NULL DEFAULT '',
    lease_until BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    stored_at   BIGINT,
    pruned_at   BIGINT
);
CREATE INDEX task_log_stored ON task_log (kind, stored_at);

-- +goose Down
DROP TABLE task_log;
