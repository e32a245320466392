-- +goose Up
-- When each reference of a DAG to an asset (its schedule, a task's inlet or
-- outlet) was first recorded and last written by a sync, as Airflow's
-- reference tables keep them (the REST API answers them). Existing
-- references take the time their DAG's latest version was recorded.
ALTER TABLE dag_schedule_asset ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE dag_schedule_asset ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
UPDATE dag_schedule_asset SET created_at = COALESCE((SELECT v.created_at FROM dag d JOIN dag_version v ON v.id = d.latest_version_id
    WHERE d.dag_id = dag_schedule_asset.dag_id), (SELECT d.last_parsed_time FROM dag d WHERE d.dag_id = dag_schedule_asset.dag_id), 0);
UPDATE dag_schedule_asset SET updated_at = created_at;
ALTER TABLE task_inlet_asset ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_inlet_asset ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
UPDATE task_inlet_asset SET created_at = COALESCE((SELECT v.created_at FROM dag d JOIN dag_version v ON v.id = d.latest_version_id
    WHERE d.dag_id = task_inlet_asset.dag_id), (SELECT d.last_parsed_time FROM dag d WHERE d.dag_id = task_inlet_asset.dag_id), 0);
UPDATE task_inlet_asset SET updated_at = created_at;
ALTER TABLE task_outlet_asset ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_outlet_asset ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
UPDATE task_outlet_asset SET created_at = COALESCE((SELECT v.created_at FROM dag d JOIN dag_version v ON v.id = d.latest_version_id
    WHERE d.dag_id = task_outlet_asset.dag_id), (SELECT d.last_parsed_time FROM dag d WHERE d.dag_id = task_outlet_asset.dag_id), 0);
UPDATE task_outlet_asset SET updated_at = created_at;

-- +goose Down
ALTER TABLE dag_schedule_asset DROP COLUMN updated_at;
ALTER TABLE dag_schedule_asset DROP COLUMN created_at;
ALTER TABLE task_inlet_asset DROP COLUMN updated_at;
ALTER TABLE task_inlet_asset DROP COLUMN created_at;
ALTER TABLE task_outlet_asset DROP COLUMN updated_at;
ALTER TABLE task_outlet_asset DROP COLUMN created_at;
