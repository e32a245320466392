-- +goose Up
CREATE TABLE dag (
    dag_id            TEXT PRIMARY KEY,
    fileloc           TEXT NOT NULL DEFAULT '',
    is_paused         BOOLEAN NOT NULL DEFAULT FALSE,
    is_active         BOOLEAN NOT NULL DEFAULT TRUE,
    description       TEXT NOT NULL DEFAULT '',
    timetable_summary TEXT NOT NULL DEFAULT '',
    tags              TEXT NOT NULL DEFAULT '[]',
    latest_version_id BIGINT,
    next_run_after    BIGINT,
    last_parsed_time  BIGINT NOT NULL
);

CREATE TABLE dag_version (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dag_id         TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    version_number INTEGER NOT NULL,
    hash           TEXT NOT NULL,
    spec           TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    UNIQUE (dag_id, version_number)
);

CREATE TABLE dag_run (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dag_id              TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    run_id              TEXT NOT NULL,
    run_type            TEXT NOT NULL,
    state               TEXT NOT NULL,
    logical_date        BIGINT,
    data_interval_start BIGINT,
    data_interval_end   BIGINT,
    conf                TEXT,
    dag_version_id      BIGINT REFERENCES dag_version (id),
    queued_at           BIGINT NOT NULL,
    start_date          BIGINT,
    end_date            BIGINT,
    UNIQUE (dag_id, run_id)
);
CREATE INDEX dag_run_dag_state ON dag_run (dag_id, state);
CREATE INDEX dag_run_dag_logical ON dag_run (dag_id, logical_date);
CREATE INDEX dag_run_state ON dag_run (state);

CREATE TABLE task_instance (
    id              UUID PRIMARY KEY,
    dag_run_id      BIGINT NOT NULL REFERENCES dag_run (id) ON DELETE CASCADE,
    dag_id          TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    task_id         TEXT NOT NULL,
    map_index       INTEGER NOT NULL DEFAULT -1,
    try_number      INTEGER NOT NULL,
    max_tries       INTEGER NOT NULL,
    state           TEXT NOT NULL DEFAULT '',
    queue           TEXT NOT NULL,
    pool            TEXT NOT NULL,
    pool_slots      INTEGER NOT NULL,
    priority_weight INTEGER NOT NULL,
    operator        TEXT NOT NULL DEFAULT '',
    hostname        TEXT NOT NULL DEFAULT '',
    worker_id       TEXT,
    claimed_at      BIGINT,
    pid             INTEGER NOT NULL DEFAULT 0,
    queued_at       BIGINT,
    start_date      BIGINT,
    end_date        BIGINT,
    last_heartbeat  BIGINT,
    next_retry_at   BIGINT,
    dag_version_id  BIGINT,
    map_args        TEXT,
    updated_at      BIGINT NOT NULL,
    UNIQUE (dag_run_id, task_id, map_index)
);
CREATE INDEX task_instance_key ON task_instance (dag_id, run_id, task_id, map_index);
-- The claim's candidate order; the partial condition keeps it small.
CREATE INDEX task_instance_claim ON task_instance (queue, priority_weight DESC, queued_at, id)
    WHERE state = 'queued' AND worker_id IS NULL;
-- Dead-worker detection: running by heartbeat, claimed-but-queued by claim time.
CREATE INDEX task_instance_running ON task_instance (last_heartbeat) WHERE state = 'running';
CREATE INDEX task_instance_claimed ON task_instance (claimed_at) WHERE state = 'queued';
-- The scheduler's passes: a run's instances by state, and the queueing order
-- of scheduled instances (see docs/benchmarks.md).
CREATE INDEX task_instance_run_state ON task_instance (dag_run_id, state);
CREATE INDEX task_instance_queueing ON task_instance (state, priority_weight DESC, dag_run_id, map_index, task_id);
-- The scheduler's incremental read of a run: instances changed since its last pass.
CREATE INDEX task_instance_run_updated ON task_instance (dag_run_id, updated_at);

CREATE TABLE task_instance_history (
    id              UUID PRIMARY KEY,
    dag_run_id      BIGINT NOT NULL REFERENCES dag_run (id) ON DELETE CASCADE,
    dag_id          TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    task_id         TEXT NOT NULL,
    map_index       INTEGER NOT NULL,
    try_number      INTEGER NOT NULL,
    max_tries       INTEGER NOT NULL,
    state           TEXT NOT NULL,
    queue           TEXT NOT NULL,
    pool            TEXT NOT NULL,
    pool_slots      INTEGER NOT NULL,
    priority_weight INTEGER NOT NULL,
    operator        TEXT NOT NULL,
    hostname        TEXT NOT NULL,
    worker_id       TEXT,
    claimed_at      BIGINT,
    pid             INTEGER NOT NULL,
    queued_at       BIGINT,
    start_date      BIGINT,
    end_date        BIGINT,
    last_heartbeat  BIGINT,
    next_retry_at   BIGINT,
    dag_version_id  BIGINT,
    map_args        TEXT,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX task_instance_history_key
    ON task_instance_history (dag_id, run_id, task_id, map_index, try_number);

CREATE TABLE xcom (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dag_run_id BIGINT NOT NULL REFERENCES dag_run (id) ON DELETE CASCADE,
    dag_id     TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    map_index  INTEGER NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    timestamp  BIGINT NOT NULL,
    UNIQUE (dag_run_id, task_id, map_index, key)
);

CREATE TABLE import_error (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    filename    TEXT NOT NULL UNIQUE,
    stack_trace TEXT NOT NULL,
    timestamp   BIGINT NOT NULL
);

CREATE TABLE slot_pool (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pool        TEXT NOT NULL UNIQUE,
    slots       INTEGER NOT NULL,
    description TEXT NOT NULL DEFAULT ''
);
INSERT INTO slot_pool (pool, slots, description) VALUES ('default_pool', 128, 'Default pool');

CREATE TABLE connection (
    conn_id TEXT PRIMARY KEY,
    uri     TEXT NOT NULL
);

CREATE TABLE weir_user (
    username      TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);

CREATE TABLE api_token (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    username   TEXT NOT NULL REFERENCES weir_user (username) ON DELETE CASCADE,
    hash       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
);

CREATE TABLE job (
    id         TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    hostname   TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat  BIGINT NOT NULL
);
CREATE INDEX job_role ON job (role, heartbeat);

CREATE TABLE audit_log (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       BIGINT NOT NULL,
    username TEXT NOT NULL,
    action   TEXT NOT NULL,
    target   TEXT NOT NULL,
    detail   TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log (at);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE job;
DROP TABLE api_token;
DROP TABLE weir_user;
DROP TABLE connection;
DROP TABLE slot_pool;
DROP TABLE import_error;
DROP TABLE xcom;
DROP TABLE task_instance_history;
DROP TABLE task_instance;
DROP TABLE dag_run;
DROP TABLE dag_version;
DROP TABLE dag;
