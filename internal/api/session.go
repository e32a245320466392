package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// SessionCookie is the name of the browser session cookie.
const SessionCookie = "weir_session"

// sessionUser resolves a session cookie's value to its user as the user is
// now: 401 for a cookie that is forged, expired, or of a session ended
// since (service.SessionUser).
func (s *server) sessionUser(ctx context.Context, value string) (*core.User, error) {
	sess, err := s.sessions.Verify(value)
	switch {
	case errors.Is(err, auth.ErrSessionExpired):
		return nil, fmt.Errorf("session expired; log in again at POST %s/auth/login: %w", Prefix, core.ErrUnauthorized)
	case err != nil:
		return nil, fmt.Errorf("session cookie is not valid; log in again at POST %s/auth/login: %w", Prefix, core.ErrUnauthorized)
	}
	return s.svc.SessionUser(ctx, sess)
}

// LoginInput is the body of POST /api/v2/auth/login.
type LoginInput struct {
	Body struct {
		Username string `json:"username" minLength:"1"`
		Password string `json:"password" minLength:"1"`
	}
	// req is what the login's cookie and throttle read of the request:
	// the peer's address, TLS and the X-Forwarded-* headers, which count
	// only from a trusted proxy (Config.TrustedProxies).
	req *http.Request
}

// Resolve records the client's address and headers (huma.Resolver).
func (in *LoginInput) Resolve(ctx huma.Context) []error {
	in.req = &http.Request{RemoteAddr: ctx.RemoteAddr(), TLS: ctx.TLS(), Header: http.Header{}}
	ctx.EachHeader(func(name, value string) {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Forwarded-") {
			in.req.Header.Add(name, value)
		}
	})
	return nil
}

// LoginOutput carries the session cookie and who logged in.
type LoginOutput struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
	Body      struct {
		Username  string    `json:"username"`
		Role      core.Role `json:"role"`
		ExpiresAt time.Time `json:"expires_at"`
	}
}

// LogoutOutput clears the session cookie.
type LogoutOutput struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
}

func (s *server) registerAuth() {
	register(s, core.RolePublic, huma.Operation{
		OperationID: "login", Method: http.MethodPost, Path: Prefix + "/auth/login", Tags: []string{"Login"},
		Summary: "Log in",
		Description: "Checks a username and password and sets an HttpOnly, SameSite=Strict session cookie. " +
			"After 5 failed logins for one user or from one address, further attempts wait (429 with Retry-After), " +
			"the wait doubling with each failure up to 5 minutes; the count lives in this api-server's memory.",
		Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests},
	}, s.login)
	register(s, core.RolePublic, huma.Operation{
		OperationID: "logout", Method: http.MethodPost, Path: Prefix + "/auth/logout", Tags: []string{"Login"},
		Summary: "Log out", Description: "Ends the user's login sessions (every browser's: a session cookie of before is refused from now on) and clears the cookie.", DefaultStatus: http.StatusNoContent,
	}, s.logout)
}

// loginProblem answers a refused login (session or token): 429 with
// Retry-After while throttled, 401 for a wrong username or password.
func (s *server) loginProblem(ctx context.Context, err error) error {
	var throttled *service.LoginThrottledError
	switch {
	case errors.As(err, &throttled):
		return huma.ErrorWithHeaders(huma.NewError(http.StatusTooManyRequests, throttled.Error()),
			http.Header{"Retry-After": {throttled.Seconds()}})
	case errors.Is(err, service.ErrBadLogin):
		return huma.NewError(http.StatusUnauthorized, "invalid username or password")
	}
	return s.problem(ctx, err)
}

func (s *server) login(ctx context.Context, in *LoginInput) (*LoginOutput, error) {
	u, err := s.svc.Login(ctx, s.cfg.LoginThrottle, in.Body.Username, in.Body.Password, s.cfg.TrustedProxies.ClientAddr(in.req))
	if err != nil {
		return nil, s.loginProblem(ctx, err)
	}
	expires := s.clk.Now().Add(s.cfg.SessionTTL)
	out := &LoginOutput{SetCookie: s.cookie(s.sessions.Sign(service.NewSession(u), expires),
		expires, s.cfg.TrustedProxies.HTTPS(in.req))}
	out.Body.Username, out.Body.Role, out.Body.ExpiresAt = u.Username, core.Role(u.Role), expires.UTC()
	return out, nil
}

// LogoutInput is what a logout reads: the session it ends.
type LogoutInput struct {
	Session string `cookie:"weir_session"`
}

// logout ends the caller's session (service.EndSession: this browser's,
// the user's others go on) and clears the cookie.
func (s *server) logout(ctx context.Context, in *LogoutInput) (*LogoutOutput, error) {
	if sess, err := s.sessions.Verify(in.Session); err == nil {
		if _, err := s.svc.SessionUser(ctx, sess); err == nil {
			if err := s.svc.EndSession(ctx, sess); err != nil {
				return nil, s.problem(ctx, err)
			}
		}
	}
	c := s.cookie("", time.Unix(0, 0), false) //nolint:gosec // attributes are set in cookie; Secure follows [api] secure_cookie
	c.MaxAge = -1
	return &LogoutOutput{SetCookie: c}, nil
}

// cookie builds the session cookie with its fixed attributes; Secure with
// [api] secure_cookie, or when the browser came over HTTPS (https).
func (s *server) cookie(value string, expires time.Time, https bool) http.Cookie {
	return http.Cookie{ //nolint:gosec // Secure follows [api] secure_cookie or HTTPS: plain-HTTP installs must still log in
		Name: SessionCookie, Value: value, Path: "/", Expires: expires.UTC(),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.cfg.SecureCookie || https,
	}
}
