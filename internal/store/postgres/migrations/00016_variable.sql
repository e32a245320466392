-- +goose Up
-- Variables (Airflow's key/value configuration, docs/variables.md): the
-- value is sealed by the secrets box (AES-256-GCM, bound to the key), as a
-- connection's URI is, so the database never holds it in plain text.
CREATE TABLE variable (
    key         TEXT PRIMARY KEY,
    val         TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE variable;
