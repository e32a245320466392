-- +goose Up
-- The health listing (GET /api/v2/monitor/health, weir health) shows each
-- role instance's Weir version, so a rolling upgrade can be followed
-- instance by instance (docs/deployment.md). '' = written by a process
-- older than this migration.
ALTER TABLE job ADD COLUMN version TEXT NOT NULL DEFAULT '';

-- Task logs kept in the shared database ([logging] log_store = database,
-- docs/deployment.md#task-logs): every api-server appends the chunks
-- workers ship and reads any try's log, live and after. A chunk holds the
-- bytes [start_at, end_at) of the log named log_key (its path in the task
-- log folder's layout); chunks never overlap and leave no gap.
CREATE TABLE task_log_chunk (
    log_key    TEXT NOT NULL,
    start_at   BIGINT NOT NULL,
    end_at     BIGINT NOT NULL,
    data       BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (log_key, start_at)
);
CREATE INDEX task_log_chunk_created ON task_log_chunk (created_at);

-- +goose Down
DROP TABLE task_log_chunk;
ALTER TABLE job DROP COLUMN version;
