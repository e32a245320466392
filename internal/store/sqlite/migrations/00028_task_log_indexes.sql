-- +goose Up
-- Fewer index entries written with every try's log (each is a page the
-- commit writes: docs/benchmarks.md, issue 14's seventh round). Chunks
-- are pruned by log (GROUP BY log_key, the primary key's order), never
-- looked up by created_at; only remote logs are looked up by stored_at
-- (to upload, to prune), so folder and database logs need no entry.
DROP INDEX task_log_chunk_created;
DROP INDEX task_log_stored;
CREATE INDEX task_log_remote ON task_log (stored_at) WHERE kind = 'remote';

-- +goose Down
DROP INDEX task_log_remote;
CREATE INDEX task_log_stored ON task_log (kind, stored_at);
CREATE INDEX task_log_chunk_created ON task_log_chunk (created_at);
