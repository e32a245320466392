-- +goose Up
-- Objects of the worker-side state backend (docs/state-backends.md#sweeping):
-- one row per object reference the server issued (reserved: a write in
-- flight, due once its grace ends) or whose row went (removed by any path:
-- a delete, a clear, retention cleanup, clear_on_success, a cleared task
-- instance, a deleted run or asset, an overwrite). Workers with the
-- backend claim due rows, delete the objects and remove the rows.
-- Times are microseconds since the epoch; 0 = at once / never claimed.
CREATE TABLE state_object (
    ref           TEXT PRIMARY KEY NOT NULL,
    reserved      BOOLEAN NOT NULL,
    due_at        BIGINT NOT NULL,
    claimed_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX state_object_due ON state_object (due_at);

-- A state row whose value is a reference hands its object to the sweep
-- when the row goes or its value changes, whatever statement removed it.
-- +goose StatementBegin
CREATE TRIGGER task_state_object_delete AFTER DELETE ON task_state_store
WHEN substr(old.value, 1, 23) = '{"__weir_state_ref__":"' AND json_extract(old.value, '$.__weir_state_ref__') IS NOT NULL
BEGIN
    INSERT INTO state_object (ref, reserved, due_at) VALUES (json_extract(old.value, '$.__weir_state_ref__'), FALSE, 0)
    ON CONFLICT (ref) DO UPDATE SET reserved = FALSE, due_at = 0;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER task_state_object_update AFTER UPDATE OF value ON task_state_store
WHEN old.value <> new.value AND substr(old.value, 1, 23) = '{"__weir_state_ref__":"'
    AND json_extract(old.value, '$.__weir_state_ref__') IS NOT NULL
BEGIN
    INSERT INTO state_object (ref, reserved, due_at) VALUES (json_extract(old.value, '$.__weir_state_ref__'), FALSE, 0)
    ON CONFLICT (ref) DO UPDATE SET reserved = FALSE, due_at = 0;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER asset_state_object_delete AFTER DELETE ON asset_state_store
WHEN substr(old.value, 1, 23) = '{"__weir_state_ref__":"' AND json_extract(old.value, '$.__weir_state_ref__') IS NOT NULL
BEGIN
    INSERT INTO state_object (ref, reserved, due_at) VALUES (json_extract(old.value, '$.__weir_state_ref__'), FALSE, 0)
    ON CONFLICT (ref) DO UPDATE SET reserved = FALSE, due_at = 0;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER asset_state_object_update AFTER UPDATE OF value ON asset_state_store
WHEN old.value <> new.value AND substr(old.value, 1, 23) = '{"__weir_state_ref__":"'
    AND json_extract(old.value, '$.__weir_state_ref__') IS NOT NULL
BEGIN
    INSERT INTO state_object (ref, reserved, due_at) VALUES (json_extract(old.value, '$.__weir_state_ref__'), FALSE, 0)
    ON CONFLICT (ref) DO UPDATE SET reserved = FALSE, due_at = 0;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER asset_state_object_update;
DROP TRIGGER asset_state_object_delete;
DROP TRIGGER task_state_object_update;
DROP TRIGGER task_state_object_delete;
DROP TABLE state_object;
