-- +goose Up
-- Lists page in the database (docs/api.md#lists): a DAG's task instances
-- across its runs (GET .../dagRuns/~/taskInstances) are listed in run,
-- task and map index order; this index serves that page without sorting
-- the DAG's every instance.
CREATE INDEX task_instance_dag_order ON task_instance (dag_id, dag_run_id, task_id, map_index);

-- +goose Down
DROP INDEX task_instance_dag_order;
