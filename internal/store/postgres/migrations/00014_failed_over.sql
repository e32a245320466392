-- +goose Up
-- A try failed over for missed heartbeats (the scheduler's dead-worker
-- check moved it to up_for_retry) is marked, so that its worker's late
-- heartbeat takes it back and its late final report ends it until the
-- retry begins; a try its worker reported failed is not
-- (docs/state-machines.md#dead-workers).
ALTER TABLE task_instance ADD COLUMN failed_over BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE task_instance DROP COLUMN failed_over;
