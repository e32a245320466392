package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/weirflow/weir/internal/core"
)

// SessionCookie is the name of the browser session cookie.
const SessionCookie = "weir_session"

// signSession returns a cookie value "<base64 username>.<expiry unix>.<base64 HMAC>"
// that verifySession accepts until expires.
func (s *server) signSession(username string, expires time.Time) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(username)) + "." + strconv.FormatInt(expires.Unix(), 10)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s *server) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.cfg.SecretKey)
	m.Write([]byte("weir-session\x00" + payload))
	return m.Sum(nil)
}

// verifySession checks a cookie value's signature and expiry and returns the
// username it was issued to.
func (s *server) verifySession(value string) (string, error) {
	bad := fmt.Errorf("session cookie is not valid; log in again at POST %s/auth/login: %w", Prefix, core.ErrUnauthorized)
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return "", bad
	}
	payload, sig := value[:i], value[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return "", bad
	}
	user64, exp, ok := strings.Cut(payload, ".")
	if !ok {
		return "", bad
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", bad
	}
	if !s.clk.Now().Before(time.Unix(unix, 0)) {
		return "", fmt.Errorf("session expired; log in again at POST %s/auth/login: %w", Prefix, core.ErrUnauthorized)
	}
	user, err := base64.RawURLEncoding.DecodeString(user64)
	if err != nil {
		return "", bad
	}
	return string(user), nil
}

// LoginInput is the body of POST /api/v2/auth/login.
type LoginInput struct {
	Body struct {
		Username string `json:"username" minLength:"1"`
		Password string `json:"password" minLength:"1"`
	}
	remote string // the client's address, for the login throttle
}

// Resolve records the client's address (huma.Resolver).
func (in *LoginInput) Resolve(ctx huma.Context) []error {
	in.remote = ctx.RemoteAddr()
	if host, _, err := net.SplitHostPort(in.remote); err == nil {
		in.remote = host
	}
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
		Summary: "Log out", Description: "Clears the session cookie.", DefaultStatus: http.StatusNoContent,
	}, s.logout)
}

func (s *server) login(ctx context.Context, in *LoginInput) (*LoginOutput, error) {
	th := s.cfg.LoginThrottle
	if wait := th.Wait(in.Body.Username, in.remote); wait > 0 {
		secs := strconv.Itoa(int((wait + time.Second - 1) / time.Second)) // whole seconds, rounded up
		return nil, huma.ErrorWithHeaders(huma.NewError(http.StatusTooManyRequests,
			"too many failed logins for this user or from this address; try again in "+secs+" s"),
			http.Header{"Retry-After": {secs}})
	}
	denied := huma.NewError(http.StatusUnauthorized, "invalid username or password")
	u, err := s.st.UserGet(ctx, in.Body.Username)
	if errors.Is(err, core.ErrNotFound) {
		// Compare anyway so an unknown user takes as long as a wrong password.
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(in.Body.Password))
		th.Failed(in.Body.Username, in.remote)
		return nil, denied
	}
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("look up user %q: %w", in.Body.Username, err))
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(in.Body.Password)) != nil {
		th.Failed(in.Body.Username, in.remote)
		return nil, denied
	}
	th.Succeeded(in.Body.Username, in.remote)
	expires := s.clk.Now().Add(s.cfg.SessionTTL)
	out := &LoginOutput{SetCookie: s.cookie(s.signSession(u.Username, expires), expires)}
	out.Body.Username, out.Body.Role, out.Body.ExpiresAt = u.Username, core.Role(u.Role), expires.UTC()
	ctx = context.WithValue(ctx, principalKey{}, &Principal{Username: u.Username, Role: core.Role(u.Role)})
	if err := s.svc.RecordLogin(ctx, u.Username); err != nil { // the login has happened; keep it
		s.log.ErrorContext(ctx, "write audit log", "action", "auth.login", "user", u.Username, "err", err)
	}
	return out, nil
}

func (s *server) logout(_ context.Context, _ *struct{}) (*LogoutOutput, error) {
	c := s.cookie("", time.Unix(0, 0)) //nolint:gosec // attributes are set in cookie; Secure follows [api] secure_cookie
	c.MaxAge = -1
	return &LogoutOutput{SetCookie: c}, nil
}

// cookie builds the session cookie with its fixed attributes.
func (s *server) cookie(value string, expires time.Time) http.Cookie {
	return http.Cookie{ //nolint:gosec // Secure follows [api] secure_cookie: plain-HTTP installs must still log in
		Name: SessionCookie, Value: value, Path: "/", Expires: expires.UTC(),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.cfg.SecureCookie,
	}
}

// dummyHash is a bcrypt hash compared against when the user is unknown.
var dummyHash = []byte("$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z3KTsRmHZd4ZXuv2.XHCG6Hy")
