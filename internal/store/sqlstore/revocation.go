package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// CredentialRevoke records a revocation, or moves an existing one of the
// same scope and subject to r's time and actor.
func (s *Store) CredentialRevoke(ctx context.Context, r *core.CredentialRevocation) error {
	_, err := s.writer().ExecContext(ctx, qRevocationUpsert, r.Scope, r.Subject, micros(r.RevokedBefore), r.RevokedBy)
	return s.wrap(err, "revoke %s credentials of %s", r.Scope, r.Subject)
}

// CredentialRevocationGet returns the revocation of a scope's subject, or
// ErrNotFound.
func (s *Store) CredentialRevocationGet(ctx context.Context, scope, subject string) (*core.CredentialRevocation, error) {
	r := core.CredentialRevocation{Scope: scope, Subject: subject}
	var at int64
	if err := s.reader().QueryRowContext(ctx, qRevocationGet, scope, subject).Scan(&at, &r.RevokedBy); err != nil {
		return nil, s.wrap(err, "get revocation of %s credentials of %s", scope, subject)
	}
	r.RevokedBefore = fromMicros(at)
	return &r, nil
}

// SessionEnd records login session id as ended until expires, and deletes
// the records of sessions expired before now (a cookie past its expiry is
// refused anyway).
func (s *Store) SessionEnd(ctx context.Context, id string, expires, now time.Time) error {
	return s.inTx(ctx, func(tx *Store) error {
		if _, err := tx.writer().ExecContext(ctx, qSessionPrune, micros(now)); err != nil {
			return s.wrap(err, "delete the records of expired sessions")
		}
		_, err := tx.writer().ExecContext(ctx, qSessionEnd, id, micros(expires))
		return s.wrap(err, "end session")
	})
}

// SessionEnded reports whether login session id was ended.
func (s *Store) SessionEnded(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.reader().QueryRowContext(ctx, qSessionEnded, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, s.wrap(err, "look up session")
}
