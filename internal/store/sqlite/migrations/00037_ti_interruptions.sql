-- +goose Up
-- How many of an instance's tries its workers stopped as they shut down
-- and refunded (runs.Interrupted: retried at once, max_tries + 1), so that
-- the refunds stop after runs.MaxRefunds (a task that makes its worker
-- stop, an eviction loop, retries as any failure then).
ALTER TABLE task_instance ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_instance_history ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE task_instance_history DROP COLUMN interruptions;
ALTER TABLE task_instance DROP COLUMN interruptions;
