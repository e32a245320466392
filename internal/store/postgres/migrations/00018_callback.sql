-- +goose Up
-- Callbacks (docs/emission.md#callbacks, ADR 0015): a fired callback is a
-- work item written in the transaction of the state change that fired it
-- (a try's start or end, a run's end: each a compare-and-set, so a
-- replayed change fires nothing) and claimed by workers. task_id is '' and
-- try_number 0 for a DAG-level callback; a run cleared and ended again
-- fires its callbacks again.
CREATE TABLE callback (
    id          BIGSERIAL PRIMARY KEY,
    level       TEXT NOT NULL,
    event       TEXT NOT NULL,
    dag_id      TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    dag_run_id  BIGINT NOT NULL REFERENCES dag_run(id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL DEFAULT '',
    map_index   INTEGER NOT NULL DEFAULT -1,
    try_number  INTEGER NOT NULL DEFAULT 0,
    spec_index  INTEGER NOT NULL,
    spec        TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    worker_id   TEXT,
    heartbeat   BIGINT,
    started_at  BIGINT,
    ended_at    BIGINT,
    error       TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);
CREATE INDEX callback_queue ON callback (state, id);
CREATE INDEX callback_run ON callback (dag_run_id, id);

-- An event an asset_event notifier emitted names its callback, and its
-- callback depth: 1 + the deepest of the events that created the run the
-- callback fired for (0 for any other event), the feedback-loop guard's
-- lineage (docs/emission.md#feedback-loops).
ALTER TABLE asset_event ADD COLUMN source_callback_id BIGINT;
ALTER TABLE asset_event ADD COLUMN callback_depth INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE asset_event DROP COLUMN callback_depth;
ALTER TABLE asset_event DROP COLUMN source_callback_id;
DROP TABLE callback;
