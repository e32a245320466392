-- +goose Up
-- An archived try found by its id: a cleared running try's worker ships
-- the try's last log lines with its token for store.LateLogGrace after the
-- clear archived it (the try gate looks the try up in history).
CREATE INDEX task_instance_history_id ON task_instance_history (id);

-- +goose Down
DROP INDEX task_instance_history_id;
