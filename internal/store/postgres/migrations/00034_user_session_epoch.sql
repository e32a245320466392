-- +goose Up
-- A login session carries its user's session epoch; logging out or
-- changing the password moves it on, which ends every session signed
-- before (the cookies themselves are stateless).
ALTER TABLE weir_user ADD COLUMN session_epoch BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE weir_user DROP COLUMN session_epoch;
