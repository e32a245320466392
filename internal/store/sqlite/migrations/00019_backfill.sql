-- +goose Up
-- Backfills (Airflow 3's first-class backfills, docs/backfills.md): one row
-- per backfill, one backfill_dag_run row per logical date it covers (with
-- the run it created or cleared, or why it made none), and the backfill a
-- dag_run belongs to. Times are microseconds since the epoch (UTC).
CREATE TABLE backfill (
    id                 INTEGER PRIMARY KEY,
    dag_id             TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    from_date          BIGINT NOT NULL,
    to_date            BIGINT NOT NULL,
    dag_run_conf       TEXT NOT NULL DEFAULT '{}',
    is_paused          BOOLEAN NOT NULL DEFAULT FALSE,
    reprocess_behavior TEXT NOT NULL,
    max_active_runs    INTEGER NOT NULL,
    created_at         BIGINT NOT NULL,
    completed_at       BIGINT,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX backfill_dag ON backfill (dag_id, id);
CREATE INDEX backfill_active ON backfill (completed_at);

CREATE TABLE backfill_dag_run (
    id               INTEGER PRIMARY KEY,
    backfill_id      BIGINT NOT NULL REFERENCES backfill (id) ON DELETE CASCADE,
    dag_run_id       BIGINT REFERENCES dag_run (id) ON DELETE SET NULL,
    exception_reason TEXT,
    logical_date     BIGINT NOT NULL,
    sort_ordinal     INTEGER NOT NULL,
    UNIQUE (backfill_id, logical_date)
);

ALTER TABLE dag_run ADD COLUMN backfill_id BIGINT REFERENCES backfill (id) ON DELETE SET NULL;
CREATE INDEX dag_run_backfill ON dag_run (backfill_id, state);

-- +goose Down
DROP INDEX dag_run_backfill;
ALTER TABLE dag_run DROP COLUMN backfill_id;
DROP TABLE backfill_dag_run;
DROP TABLE backfill;
