-- +goose Up
-- Warnings about a DAG that loads (Airflow's dag_warning): the DAG processor
-- records one row per DAG and warning type while the DAG's definition has
-- the problem, and deletes it once fixed. docs/security.md#dag-files.
CREATE TABLE dag_warning (
    dag_id       TEXT NOT NULL REFERENCES dag (dag_id) ON DELETE CASCADE,
    warning_type TEXT NOT NULL,
    message      TEXT NOT NULL,
    timestamp    BIGINT NOT NULL,
    PRIMARY KEY (dag_id, warning_type)
);

-- +goose Down
DROP TABLE dag_warning;
