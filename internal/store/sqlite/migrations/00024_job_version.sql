-- +goose Up
-- The health listing (GET /api/v2/monitor/health, weir health) shows each
-- role instance's Weir version, so a rolling upgrade can be followed
-- instance by instance (docs/deployment.md). '' = written by a process
-- older than this migration.
ALTER TABLE job ADD COLUMN version TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE job DROP COLUMN version;
