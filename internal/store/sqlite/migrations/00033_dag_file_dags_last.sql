-- +goose Up
-- The DAGs' JSON becomes dag_file's last column. SQLite keeps a row's
-- values in column order and a large value in a chain of overflow pages,
-- which a read walks to reach a column after it: listing every file's ids,
-- sums and errors without their DAGs (weir dags test, which needs one
-- file's DAGs) read every file's JSON all the same. The rows are a cache of
-- parses; they are kept.
CREATE TABLE dag_file_new (
    fileloc   TEXT PRIMARY KEY,
    parser    TEXT NOT NULL,
    sum       TEXT NOT NULL,
    dag_ids   TEXT NOT NULL,
    error     TEXT NOT NULL,
    parsed_at BIGINT NOT NULL,
    dags      TEXT NOT NULL
);
INSERT INTO dag_file_new (fileloc, parser, sum, dag_ids, error, parsed_at, dags)
    SELECT fileloc, parser, sum, dag_ids, error, parsed_at, dags FROM dag_file;
DROP TABLE dag_file;
ALTER TABLE dag_file_new RENAME TO dag_file;

-- +goose Down
CREATE TABLE dag_file_old (
    fileloc   TEXT PRIMARY KEY,
    parser    TEXT NOT NULL,
    sum       TEXT NOT NULL,
    dag_ids   TEXT NOT NULL,
    dags      TEXT NOT NULL,
    error     TEXT NOT NULL,
    parsed_at BIGINT NOT NULL
);
INSERT INTO dag_file_old (fileloc, parser, sum, dag_ids, dags, error, parsed_at)
    SELECT fileloc, parser, sum, dag_ids, dags, error, parsed_at FROM dag_file;
DROP TABLE dag_file;
ALTER TABLE dag_file_old RENAME TO dag_file;
