-- +goose Up
-- task_instance_key (dag_id, run_id, task_id, map_index) repeated what the
-- unique key (dag_run_id, task_id, map_index) holds: lookups by a run's
-- dag_id and run_id now find its id in dag_run's unique key first. Every
-- update of a task instance that is not HOT (each change of its state)
-- wrote an entry in every index of the table; there is one fewer
-- (docs/benchmarks.md, issue 14's tenth round).
DROP INDEX task_instance_key;

-- +goose Down
CREATE INDEX task_instance_key ON task_instance (dag_id, run_id, task_id, map_index);
