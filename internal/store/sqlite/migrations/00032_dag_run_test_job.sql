-- +goose Up
-- The job row of the `weir dags test` (or `tasks test`) process running a
-- run in-process: its api-server's. A run whose process stopped
-- heartbeating without ending it (killed, its machine lost) is failed by
-- the schedulers (docs/cli.md#weir-dags-test); NULL for every other run.
ALTER TABLE dag_run ADD COLUMN test_job_id TEXT;
CREATE INDEX dag_run_test ON dag_run (state) WHERE test_job_id IS NOT NULL;

-- +goose Down
DROP INDEX dag_run_test;
ALTER TABLE dag_run DROP COLUMN test_job_id;
