-- +goose Up
-- Asset events emitted by running code (docs/emission.md, docs/requirements.md#e): the
-- partition date (microseconds since the epoch, UTC; only with a partition
-- key), the idempotency key a second emission repeats to get the first
-- event's receipt (one namespace: a key names one event of one asset), and
-- the API user who posted an external event. A DAG's conditional asset
-- schedule (docs/assets.md#conditional-schedules) as JSON, its references
-- by asset name or alias; NULL for a plain list (all of them).
ALTER TABLE asset_event ADD COLUMN partition_date BIGINT;
ALTER TABLE asset_event ADD COLUMN idempotency_key TEXT;
ALTER TABLE asset_event ADD COLUMN source_user TEXT;
CREATE UNIQUE INDEX asset_event_idempotency_key ON asset_event (idempotency_key) WHERE idempotency_key IS NOT NULL;
ALTER TABLE dag ADD COLUMN asset_condition TEXT;
CREATE INDEX asset_event_partition ON asset_event (asset_id, partition_key) WHERE partition_key IS NOT NULL;

-- +goose Down
ALTER TABLE dag DROP COLUMN asset_condition;
DROP INDEX asset_event_partition;
DROP INDEX asset_event_idempotency_key;
ALTER TABLE asset_event DROP COLUMN source_user;
ALTER TABLE asset_event DROP COLUMN idempotency_key;
ALTER TABLE asset_event DROP COLUMN partition_date;
