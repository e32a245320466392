-- +goose Up
-- Revoked credentials (docs/security.md#revocation): every credential of a
-- scope ('worker') issued to a subject (a worker name) at or before
-- revoked_before (unix microseconds) is refused by every api-server. A
-- later revocation of the same subject moves revoked_before forward;
-- credentials issued after it are valid again.
CREATE TABLE credential_revocation (
    scope          TEXT NOT NULL,
    subject        TEXT NOT NULL,
    revoked_before BIGINT NOT NULL,
    revoked_by     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (scope, subject)
);

-- +goose Down
DROP TABLE credential_revocation;
