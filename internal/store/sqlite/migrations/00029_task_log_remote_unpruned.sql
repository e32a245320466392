-- +goose Up
-- Only remote logs not yet pruned are looked up by stored_at (to upload,
-- to prune): a record pruned by retention stays (it says when), and in
-- the index it made each minute's prune walk every record pruned before
-- it (oldest first) to reach the first one still stored. Such records now
-- leave the index when they are pruned. Building the index reads the whole
-- table once, holding off writes to it meanwhile (an upgrade's moment).
DROP INDEX task_log_remote;
CREATE INDEX task_log_remote ON task_log (stored_at) WHERE kind = 'remote' AND pruned_at IS NULL;

-- +goose Down
DROP INDEX task_log_remote;
CREATE INDEX task_log_remote ON task_log (stored_at) WHERE kind = 'remote';
