package sqlstore

import (
	"context"

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
