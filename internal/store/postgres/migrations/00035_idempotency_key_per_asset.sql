-- +goose Up
-- An idempotency key names one event of its asset, not one across Weir:
-- a producer of one asset can no longer take a key another asset's
-- producer will use (and learn, from the conflict, which event holds it).
DROP INDEX asset_event_idempotency_key;
CREATE UNIQUE INDEX asset_event_idempotency_key ON asset_event (asset_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- +goose Down
-- Fails when two assets' events share a key (the global rule cannot hold).
DROP INDEX asset_event_idempotency_key;
CREATE UNIQUE INDEX asset_event_idempotency_key ON asset_event (idempotency_key) WHERE idempotency_key IS NOT NULL;
