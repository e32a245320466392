-- +goose Up
-- The login sessions ended one by one (a browser's logout): a session
-- cookie whose id is listed is refused until its own expiry, when its row
-- goes. A new password still ends all of a user's sessions at once
-- (weir_user.session_epoch).
CREATE TABLE ended_session (
    session_id TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE ended_session;
