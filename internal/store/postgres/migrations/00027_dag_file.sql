-- +goose Up
-- What the last parse of each DAG file gave (docs/dag-files.md#parsing-once),
-- so that a process that starts (weir dags test, a scheduler) reuses it
-- instead of parsing a file again: the DAGs it defines (dags, the JSON of
-- []core.DAG, and dag_ids, the JSON array of their ids) or why it does
-- not load (error). A row is used only for the same
-- bytes (sum, the hex SHA-256 of the file) parsed by the same parser (the
-- weir build and its trigger types); the DAG processor replaces it when the
-- file changes and deletes it when the file is gone.
CREATE TABLE dag_file (
    fileloc   TEXT PRIMARY KEY,
    parser    TEXT NOT NULL,
    sum       TEXT NOT NULL,
    dag_ids   TEXT NOT NULL,
    dags      TEXT NOT NULL,
    error     TEXT NOT NULL,
    parsed_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE dag_file;
