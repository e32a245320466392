-- +goose Up
-- Event streams (docs/streaming.md, SPEC F): a trigger run (or a running
-- task) may produce many events. Each is an envelope in trigger_event,
-- {stream_id (the trigger run), sequence_index from 0, payload, is_last},
-- committed before the producer is told it was accepted. trigger_stream is
-- the stream's head: the next sequence index (so a restarted producer
-- resumes after the last persisted one, even once consumed envelopes were
-- cleaned), how many envelopes are pending (appended, not consumed) and
-- the bound on them (max_pending: the producer waits for room), whether
-- it is closed (is_last sent, or the producer ended or failed: error).
-- A trigger that produces a stream names it (trigger.stream_id) and stays
-- until the stream closes. Consumed envelopes are deleted after the
-- retention ([triggerer] stream_retention).
CREATE TABLE trigger_stream (
    id          TEXT PRIMARY KEY,
    max_pending INTEGER NOT NULL,
    next_index  BIGINT NOT NULL DEFAULT 0,
    pending     INTEGER NOT NULL DEFAULT 0,
    closed      BOOLEAN NOT NULL DEFAULT FALSE,
    error       TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX trigger_stream_closed ON trigger_stream (updated_at) WHERE closed;

CREATE TABLE trigger_event (
    stream_id      TEXT NOT NULL REFERENCES trigger_stream (id) ON DELETE CASCADE,
    sequence_index BIGINT NOT NULL,
    payload        TEXT NOT NULL,
    is_last        BOOLEAN NOT NULL DEFAULT FALSE,
    created_at     BIGINT NOT NULL,
    consumed_at    BIGINT,
    PRIMARY KEY (stream_id, sequence_index)
);
CREATE INDEX trigger_event_consumed ON trigger_event (consumed_at) WHERE consumed_at IS NOT NULL;

ALTER TABLE trigger ADD COLUMN stream_id TEXT;
CREATE INDEX trigger_stream_id ON trigger (stream_id) WHERE stream_id IS NOT NULL;

-- +goose Down
DROP INDEX trigger_stream_id;
ALTER TABLE trigger DROP COLUMN stream_id;
DROP INDEX trigger_event_consumed;
DROP TABLE trigger_event;
DROP INDEX trigger_stream_closed;
DROP TABLE trigger_stream;
