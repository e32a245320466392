package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
)

// DefaultLoginTokenTTL is how long a token from POST /api/v2/auth/token
// lasts when Config.LoginTokenTTL is 0: a day, as Airflow's API tokens.
const DefaultLoginTokenTTL = 24 * time.Hour

// TokenOutput is a bearer API token issued for a username and password.
type TokenOutput struct {
	Status int
	Body   struct {
		AccessToken string    `json:"access_token" doc:"send it as \"Authorization: Bearer <access_token>\""`
		TokenType   string    `json:"token_type" enum:"bearer"`
		Username    string    `json:"username"`
		Role        core.Role `json:"role"`
		ExpiresAt   time.Time `json:"expires_at"`
	}
}

// WhoAmI is the caller of GET /api/v2/auth/me.
type WhoAmI struct {
	Username string    `json:"username"`
	Role     core.Role `json:"role"`
}

// AirflowTokenPath is where Airflow 3's API clients ask for a token (its
// simple auth manager's POST /auth/token): the same operation as POST
// /api/v2/auth/token, whose answer's access_token they read.
const AirflowTokenPath = "/auth/token" //nolint:gosec // G101: a route, not a credential

func (s *server) registerAuthToken() {
	tokenOp := huma.Operation{
		OperationID: "create_token", Method: http.MethodPost, Path: Prefix + "/auth/token", Tags: []string{"Login"},
		Summary: "Issue an API token for a username and password",
		Description: "Checks a username and password as POST /api/v2/auth/login does (the same throttle and audit entry) and " +
			"returns a bearer API token of that user (the token `weir login` stores). It expires after the api-server's " +
			"login token lifetime (a day by default) and acts with the user's role as it is at each request.",
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusUnauthorized, http.StatusTooManyRequests},
	}
	register(s, core.RolePublic, tokenOp, s.createToken)
	tokenOp.OperationID, tokenOp.Path = "create_token_airflow", AirflowTokenPath
	tokenOp.Summary = "Issue an API token for a username and password (Airflow 3's path)"
	register(s, core.RolePublic, tokenOp, s.createToken)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_auth_me", Method: http.MethodGet, Path: Prefix + "/auth/me", Tags: []string{"Login"},
		Summary: "Who am I", Description: "Returns the authenticated caller's username and role (`weir login --status`).",
	}, s.whoAmI)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "revoke_own_token", Method: http.MethodDelete, Path: Prefix + "/auth/token", Tags: []string{"Login"},
		Summary: "Revoke the API token of this request",
		Description: "Deletes the bearer API token the request bears, whoever's role (`weir logout` revokes the token its " +
			"login issued). 400 for a request authenticated by a session cookie. Audited as api_token.revoke.",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusBadRequest},
	}, s.revokeOwnToken)
}

func (s *server) revokeOwnToken(ctx context.Context, _ *struct{}) (*struct{}, error) {
	p := PrincipalFrom(ctx)
	if p == nil || p.TokenID == "" {
		return nil, invalid("this request bears no API token to revoke: log out of a session with POST " + Prefix + "/auth/logout")
	}
	if err := s.svc.RevokeOwnAPIToken(ctx, actor(ctx), p.TokenID); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}

func (s *server) createToken(ctx context.Context, in *LoginInput) (*TokenOutput, error) {
	ttl := s.cfg.LoginTokenTTL
	if ttl == 0 {
		ttl = DefaultLoginTokenTTL
	}
	tok, err := s.svc.IssueLoginToken(ctx, s.cfg.LoginThrottle, in.Body.Username, in.Body.Password, s.cfg.TrustedProxies.ClientAddr(in.req), ttl)
	if err != nil {
		return nil, s.loginProblem(ctx, err)
	}
	out := &TokenOutput{Status: http.StatusCreated}
	out.Body.AccessToken, out.Body.TokenType = tok.Secret, "bearer"
	out.Body.Username, out.Body.Role, out.Body.ExpiresAt = tok.User.Username, core.Role(tok.User.Role), tok.ExpiresAt.UTC()
	return out, nil
}

func (s *server) whoAmI(ctx context.Context, _ *struct{}) (*struct{ Body WhoAmI }, error) {
	p := PrincipalFrom(ctx)
	return &struct{ Body WhoAmI }{WhoAmI{Username: p.Username, Role: p.Role}}, nil
}
