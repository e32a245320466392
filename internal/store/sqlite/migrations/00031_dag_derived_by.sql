-- +goose Up
-- The parser (program build and loader options) whose sync last derived a
-- DAG's asset references and warnings from its spec: a DAG unchanged since
-- is derived again only by another parser (ADR 0040), so that an upgraded
-- binary's rules reach DAGs whose files did not change.
ALTER TABLE dag ADD COLUMN derived_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE dag DROP COLUMN derived_by;
