package service

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// LoginToken is what IssueLoginToken returns: a new API token's secret, the
// user it acts as and when it expires.
type LoginToken struct {
	Secret    string
	User      core.User
	ExpiresAt time.Time
}

// IssueLoginToken checks a username and password as Login does (throttled,
// audited as a login) and issues an API token of that user lasting ttl, the
// token `weir login` stores. Any role may have one: the token carries the
// user's role, read afresh on every request. Bad credentials wrap
// core.ErrUnauthorized (ErrBadLogin or *LoginThrottledError); ttl must be
// positive.
func (s *Service) IssueLoginToken(ctx context.Context, th *auth.LoginThrottle, username, password, remote string, ttl time.Duration) (*LoginToken, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("login token lifetime %s: must be positive: %w", ttl, core.ErrInvalid)
	}
	u, err := s.Login(ctx, th, username, password, remote)
	if err != nil {
		return nil, err
	}
	secret, hash := auth.NewToken()
	now := s.clock.Now().UTC()
	exp := now.Add(ttl)
	t := &core.APIToken{ID: uuid.NewString(), Name: core.LoginTokenName, Username: u.Username, Hash: hash, CreatedAt: now, ExpiresAt: &exp}
	actor := core.Actor{Name: u.Username, Role: core.Role(u.Role)}
	c := &change{actor: actor, need: core.RoleViewer, action: audit.APITokenCreate, target: u.Username}
	err = s.do(ctx, c, func(tx store.Store, detail *string) error {
		*detail = "token " + t.ID + " name=" + t.Name
		return tx.APITokenCreate(ctx, t)
	})
	if err != nil {
		return nil, fmt.Errorf("issue login token for user %q: %w", u.Username, err)
	}
	return &LoginToken{Secret: secret, User: *u, ExpiresAt: exp}, nil
}
