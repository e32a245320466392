-- +goose Up
-- The runs an asset event created, found by the event (the REST API
-- answers them with each event, as Airflow's created_dagruns): the
-- primary key leads with the run.
CREATE INDEX dag_run_asset_event_event ON dag_run_asset_event (event_id);

-- +goose Down
DROP INDEX dag_run_asset_event_event;
