-- +goose Up
-- When someone other than its worker ended a running try (a mark of the
-- instance or of its run, a failover): its worker, which learns of it at
-- its next heartbeat, may still ship the try's last log lines for
-- store.LateLogGrace after (the try gate), and a remote log store uploads
-- the log only then. NULL for a try its worker ended.
ALTER TABLE task_instance ADD COLUMN stopped_at BIGINT;
ALTER TABLE task_instance_history ADD COLUMN stopped_at BIGINT;

-- +goose Down
ALTER TABLE task_instance_history DROP COLUMN stopped_at;
ALTER TABLE task_instance DROP COLUMN stopped_at;
