-- +goose Up
-- A process's unbroken run of heartbeats (docs/state-machines.md#dead-workers):
-- up_since is when the process's current run of on-time heartbeat writes
-- began (0 = its start). An api-server whose writes failed or came late (the
-- database was unavailable, the process was stopped) starts a new run, so
-- the scheduler never takes an outage for uptime, even one it did not see.
ALTER TABLE job ADD COLUMN up_since BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE job DROP COLUMN up_since;
