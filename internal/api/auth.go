package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	Username string
	Role     core.Role
	// TokenID is the API token the request bore ("" for a session).
	TokenID string
}

type principalKey struct{}

// PrincipalFrom returns the authenticated caller, or nil on public routes.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

const (
	metaRole        = "weir-role"
	securityBearer  = "bearer"
	securitySession = "session"
)

// authenticate is the middleware that resolves the caller from the bearer
// token or session cookie and enforces the operation's role: 401 without
// valid credentials, 403 when the role is too low.
func (s *server) authenticate(hctx huma.Context, next func(huma.Context)) {
	need, _ := hctx.Operation().Metadata[metaRole].(core.Role)
	if need == core.RolePublic {
		next(hctx)
		return
	}
	p, err := s.principal(hctx)
	if err != nil {
		status, msg := s.publicDetail(hctx.Context(), err)
		if status == http.StatusUnauthorized {
			hctx.SetHeader("WWW-Authenticate", `Bearer realm="weir"`)
		}
		_ = huma.WriteErr(s.api, hctx, status, msg)
		return
	}
	if !p.Role.Allows(need) {
		_ = huma.WriteErr(s.api, hctx, http.StatusForbidden,
			fmt.Sprintf("user %q has role %q; %s %s needs role %q or higher",
				p.Username, p.Role, hctx.Method(), hctx.Operation().Path, need))
		return
	}
	next(huma.WithValue(hctx, principalKey{}, p))
}

// principal finds the caller's identity: a bearer token first, else the
// session cookie.
func (s *server) principal(hctx huma.Context) (*Principal, error) {
	ctx := hctx.Context()
	if h := hctx.Header("Authorization"); h != "" {
		scheme, secret, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") || secret == "" {
			return nil, fmt.Errorf("Authorization header must be \"Bearer <token>\": %w", core.ErrUnauthorized) //nolint:staticcheck // starts with the header's name
		}
		return s.tokenPrincipal(ctx, strings.TrimSpace(secret))
	}
	if c, err := huma.ReadCookie(hctx, SessionCookie); err == nil {
		u, err := s.sessionUser(ctx, c.Value)
		if err != nil {
			return nil, err
		}
		return &Principal{Username: u.Username, Role: core.Role(u.Role)}, nil
	}
	return nil, fmt.Errorf("authentication required: send \"Authorization: Bearer <token>\" or log in at POST %s/auth/login: %w", Prefix, core.ErrUnauthorized)
}

// tokenPrincipal resolves an API token secret to its user.
func (s *server) tokenPrincipal(ctx context.Context, secret string) (*Principal, error) {
	t, err := s.st.APITokenGet(ctx, auth.HashToken(secret))
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("API token is not valid (unknown or revoked): %w", core.ErrUnauthorized)
	}
	if err != nil {
		return nil, fmt.Errorf("look up API token: %w", err)
	}
	if t.ExpiresAt != nil && !s.clk.Now().Before(*t.ExpiresAt) {
		return nil, fmt.Errorf("API token %q expired at %s: %w", t.Name, t.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"), core.ErrUnauthorized)
	}
	p, err := s.userPrincipal(ctx, t.Username)
	if p != nil {
		p.TokenID = t.ID
	}
	return p, err
}

// userPrincipal loads a user's current role, so role changes and deleted
// users take effect at once.
func (s *server) userPrincipal(ctx context.Context, username string) (*Principal, error) {
	u, err := s.st.UserGet(ctx, username)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("user %q no longer exists: %w", username, core.ErrUnauthorized)
	}
	if err != nil {
		return nil, fmt.Errorf("look up user %q: %w", username, err)
	}
	return &Principal{Username: u.Username, Role: core.Role(u.Role)}, nil
}

// actor is the request's principal as the services see it.
func actor(ctx context.Context) core.Actor {
	if p := PrincipalFrom(ctx); p != nil {
		return core.Actor{Name: p.Username, Role: p.Role}
	}
	return core.Actor{}
}
