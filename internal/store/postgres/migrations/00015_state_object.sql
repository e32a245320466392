-- +goose Up
-- Objects of the worker-side state backend (docs/state-backends.md#sweeping):
-- one row per object reference the server issued (reserved: a write in
-- flight, due once its grace ends) or whose row went (removed by any path:
-- a delete, a clear, retention cleanup, clear_on_success, a cleared task
-- instance, a deleted run or asset, an overwrite). Workers with the
-- backend claim due rows, delete the objects and remove the rows.
-- Times are microseconds since the epoch; 0 = at once / never claimed.
CREATE TABLE state_object (
    ref           TEXT PRIMARY KEY,
    reserved      BOOLEAN NOT NULL,
    due_at        BIGINT NOT NULL,
    claimed_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX state_object_due ON state_object (due_at);

-- A state row whose value is a reference hands its object to the sweep
-- when the row goes or its value changes, whatever statement removed it.
-- +goose StatementBegin
CREATE FUNCTION state_object_release() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    obj TEXT;
BEGIN
    IF left(OLD.value, 23) <> '{"__weir_state_ref__":"' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.value = NEW.value THEN
        RETURN NULL;
    END IF;
    obj := OLD.value::jsonb ->> '__weir_state_ref__';
    IF obj IS NOT NULL THEN
        INSERT INTO state_object (ref, reserved, due_at) VALUES (obj, FALSE, 0)
        ON CONFLICT (ref) DO UPDATE SET reserved = FALSE, due_at = 0;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER task_state_object_release AFTER DELETE OR UPDATE OF value ON task_state_store
    FOR EACH ROW EXECUTE FUNCTION state_object_release();
CREATE TRIGGER asset_state_object_release AFTER DELETE OR UPDATE OF value ON asset_state_store
    FOR EACH ROW EXECUTE FUNCTION state_object_release();

-- +goose Down
DROP TRIGGER asset_state_object_release ON asset_state_store;
DROP TRIGGER task_state_object_release ON task_state_store;
DROP FUNCTION state_object_release();
DROP TABLE state_object;
