-- +goose Up
-- Triggers (docs/triggers.md): a trigger is a value, its registered type and
-- JSON kwargs, run by the triggerer whose job id is triggerer_id (NULL =
-- unassigned; a triggerer whose job heartbeat is stale loses its triggers
-- to the next claim). A deferred try points at its trigger, names the
-- method to resume with and the moment it times out; the event that
-- resumes it is stored on the try (next_event) in the transaction that
-- moves it back to scheduled.
CREATE TABLE trigger (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type         TEXT NOT NULL,
    kwargs       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    triggerer_id TEXT
);
CREATE INDEX trigger_triggerer ON trigger (triggerer_id);

ALTER TABLE task_instance ADD COLUMN trigger_id BIGINT REFERENCES trigger (id) ON DELETE SET NULL;
ALTER TABLE task_instance ADD COLUMN trigger_timeout BIGINT;
ALTER TABLE task_instance ADD COLUMN next_method TEXT NOT NULL DEFAULT '';
ALTER TABLE task_instance ADD COLUMN next_kwargs TEXT;
ALTER TABLE task_instance ADD COLUMN next_event TEXT;
CREATE INDEX task_instance_trigger ON task_instance (trigger_id) WHERE trigger_id IS NOT NULL;
CREATE INDEX task_instance_trigger_timeout ON task_instance (trigger_timeout) WHERE state = 'deferred';

ALTER TABLE task_instance_history ADD COLUMN trigger_id BIGINT;
ALTER TABLE task_instance_history ADD COLUMN trigger_timeout BIGINT;
ALTER TABLE task_instance_history ADD COLUMN next_method TEXT NOT NULL DEFAULT '';
ALTER TABLE task_instance_history ADD COLUMN next_kwargs TEXT;
ALTER TABLE task_instance_history ADD COLUMN next_event TEXT;

-- +goose Down
DROP INDEX task_instance_trigger_timeout;
DROP INDEX task_instance_trigger;
ALTER TABLE task_instance_history DROP COLUMN next_event;
ALTER TABLE task_instance_history DROP COLUMN next_kwargs;
ALTER TABLE task_instance_history DROP COLUMN next_method;
ALTER TABLE task_instance_history DROP COLUMN trigger_timeout;
ALTER TABLE task_instance_history DROP COLUMN trigger_id;
ALTER TABLE task_instance DROP COLUMN next_event;
ALTER TABLE task_instance DROP COLUMN next_kwargs;
ALTER TABLE task_instance DROP COLUMN next_method;
ALTER TABLE task_instance DROP COLUMN trigger_timeout;
ALTER TABLE task_instance DROP COLUMN trigger_id;
DROP TABLE trigger;
