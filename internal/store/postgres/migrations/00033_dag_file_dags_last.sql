-- +goose Up
-- SQLite's 00033 moves dag_file.dags to the row's end, so that a listing
-- without the DAGs does not walk their overflow pages. PostgreSQL keeps a
-- large value out of line (TOAST) and reads it only when asked: nothing to
-- move. The migration keeps the engines' versions alike.
SELECT 1;

-- +goose Down
SELECT 1;
