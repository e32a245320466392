package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// RevokeWorkerCredentials refuses every worker credential issued to the
// named worker up to now (to the millisecond of their iat_ms; to the
// second for credentials of before it): every
// api-server refuses them within auth.DefaultRevocationTTL, and the worker
// exits. A credential issued for the same name afterwards is valid.
// Needs role admin.
func (s *Service) RevokeWorkerCredentials(ctx context.Context, actor core.Actor, worker string) error {
	if strings.TrimSpace(worker) == "" {
		return fmt.Errorf("revoke worker credentials: the worker name is empty: %w", core.ErrInvalid)
	}
	now := s.clock.Now().UTC()
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.WorkerRevoke, target: worker}
	return s.do(ctx, c, func(tx store.Store, detail *string) error {
		*detail = "credentials issued up to " + now.Format("2006-01-02T15:04:05Z")
		return tx.CredentialRevoke(ctx, &core.CredentialRevocation{Scope: auth.ScopeWorker, Subject: worker,
			RevokedBefore: now, RevokedBy: actor.Name})
	})
}
