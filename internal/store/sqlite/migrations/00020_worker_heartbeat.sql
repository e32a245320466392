-- +goose Up
-- Workers heartbeat as workers (docs/state-machines.md#dead-workers): a
-- job row per worker process carries the worker's name (its credential's
-- subject, the task instances' worker_id) and every role's row how often
-- it beats, so that a dead worker's tries fail over within two of its
-- heartbeat intervals and staleness is judged per row.
ALTER TABLE job ADD COLUMN worker_id TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN heartbeat_interval BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE job DROP COLUMN heartbeat_interval;
ALTER TABLE job DROP COLUMN worker_id;
