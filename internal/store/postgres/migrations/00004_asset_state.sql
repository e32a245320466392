-- +goose Up
-- Asset state (AIP-103, SPEC AS-1..AS-6): one row per (asset, key), with no
-- retention; the rows go with their asset (ON DELETE CASCADE) or, once the
-- asset has been inactive for [state_store] asset_state_orphan_retention_days,
-- with cleanup's orphan sweep (AS-5). The last_updated_by_* columns record
-- the last writer (AS-6); they are denormalized, without foreign keys, so
-- they outlive the run that wrote them.
CREATE TABLE asset_state_store (
    asset_id                  BIGINT NOT NULL REFERENCES asset (id) ON DELETE CASCADE,
    key                       VARCHAR(512) NOT NULL,
    value                     TEXT NOT NULL,
    updated_at                BIGINT NOT NULL,
    last_updated_by_kind      VARCHAR(16) NOT NULL
        CHECK (last_updated_by_kind IN ('task', 'watcher', 'api', 'user')),
    last_updated_by_dag_id    TEXT NOT NULL DEFAULT '',
    last_updated_by_run_id    TEXT NOT NULL DEFAULT '',
    last_updated_by_task_id   TEXT NOT NULL DEFAULT '',
    last_updated_by_map_index INTEGER NOT NULL DEFAULT -1,
    last_updated_by_try       INTEGER NOT NULL DEFAULT 0,
    last_updated_by_user      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (asset_id, key)
);

-- +goose Down
DROP TABLE asset_state_store;
