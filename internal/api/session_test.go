package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

func TestLoginSessionFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hash, err := auth.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	e.addUser("alice", core.RoleOp, hash)

	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "POST", "/api/v2/auth/login",
		map[string]string{"username": "alice", "password": "wrong"}, "invalid username or password")
	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "POST", "/api/v2/auth/login",
		map[string]string{"username": "bob", "password": "s3cret"}, "invalid username or password")

	resp := e.request(core.RolePublic, "POST", "/api/v2/auth/login", map[string]string{"username": "alice", "password": "s3cret"})
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: status %d", resp.StatusCode)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == "" {
		t.Fatalf("session cookie %+v, want HttpOnly SameSite=Strict", cookie)
	}
	sess := api.SessionCookie + "=" + cookie.Value
	otherBrowser := loginCookie(e, "alice", "s3cret")

	// The cookie authenticates as alice (op): she may pause a DAG.
	status, b := e.call(core.RolePublic, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": true}, "Cookie", sess)
	if status != http.StatusOK {
		t.Fatalf("PATCH with session: %d %s", status, b)
	}
	if !e.hasAudit("alice", "dag.pause", "etl") || !e.hasAudit("alice", "auth.login", "alice") {
		t.Errorf("audit log lacks alice's login or pause: %+v", e.audit())
	}
	// but not create pools.
	status, _ = e.call(core.RolePublic, "POST", "/api/v2/pools", map[string]any{"name": "p", "slots": 1}, "Cookie", sess)
	if status != http.StatusForbidden {
		t.Errorf("op session creating a pool: status %d, want 403", status)
	}

	// A tampered cookie is rejected.
	tampered := api.SessionCookie + "=" + strings.Replace(cookie.Value, cookie.Value[:4], "YWRt", 1)
	status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", tampered)
	if status != http.StatusUnauthorized || !strings.Contains(string(b), "session cookie is not valid") {
		t.Errorf("tampered cookie: %d %s", status, b)
	}

	// Logout clears the cookie.
	resp = e.request(core.RolePublic, "POST", "/api/v2/auth/logout", nil, "Cookie", sess)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("logout: status %d", resp.StatusCode)
	}
	cleared := false
	for _, c := range resp.Cookies() {
		cleared = cleared || (c.Name == api.SessionCookie && c.Value == "" && c.MaxAge < 0)
	}
	if !cleared {
		t.Errorf("logout did not clear the cookie: %v", resp.Header.Values("Set-Cookie"))
	}
	// and ends the session: the cookie, kept by whoever copied it, is refused,
	status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", sess)
	if status != http.StatusUnauthorized || !strings.Contains(string(b), "the session has ended") {
		t.Errorf("a logged-out session: %d %s, want 401 saying it has ended", status, b)
	}
	// while the user's session in another browser goes on.
	if status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", otherBrowser); status != http.StatusOK {
		t.Errorf("the session of another browser after a logout: %d %s, want it to go on", status, b)
	}
	// A new login works until the password changes.
	again := loginCookie(e, "alice", "s3cret")
	if status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", again); status != http.StatusOK {
		t.Fatalf("a new login's session: %d %s", status, b)
	}
	if status, b = e.call(core.RoleAdmin, "PATCH", "/api/v2/users/alice", map[string]any{"role": "viewer"}); status != http.StatusOK {
		t.Fatalf("change alice's role: %d %s", status, b)
	}
	if status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", again); status != http.StatusOK {
		t.Errorf("a session after a role change (the role applies at once, the session goes on): %d %s", status, b)
	}
	if status, b = e.call(core.RoleAdmin, "PATCH", "/api/v2/users/alice", map[string]any{"password": "n3w-secret"}); status != http.StatusOK {
		t.Fatalf("change alice's password: %d %s", status, b)
	}
	for _, s := range []string{again, otherBrowser} { // every browser's
		status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", s)
		if status != http.StatusUnauthorized || !strings.Contains(string(b), "the session has ended") {
			t.Errorf("a session after a new password: %d %s, want 401 saying it has ended", status, b)
		}
	}
	// A user deleted and created anew under the same name does not inherit
	// the sessions of the one before (which never logged out).
	if status, b = e.call(core.RoleAdmin, "PUT", "/api/v2/users/bob", map[string]any{"password": "bob-pw", "role": "op"}); status != http.StatusOK {
		t.Fatalf("create bob: %d %s", status, b)
	}
	before := loginCookie(e, "bob", "bob-pw")
	if status, b = e.call(core.RoleAdmin, "DELETE", "/api/v2/users/bob", nil); status != http.StatusNoContent {
		t.Fatalf("delete bob: %d %s", status, b)
	}
	if status, b = e.call(core.RoleAdmin, "POST", "/api/v2/users", map[string]any{"username": "bob", "password": "again-pw", "role": "op"}); status != http.StatusCreated {
		t.Fatalf("create bob anew: %d %s", status, b)
	}
	// POST creates only: an existing user is left as it is.
	if status, b = e.call(core.RoleAdmin, "POST", "/api/v2/users", map[string]any{"username": "bob", "password": "x", "role": "admin"}); status != http.StatusConflict ||
		!strings.Contains(string(b), `user \"bob\" exists (role op)`) {
		t.Errorf("POST of an existing user: %d %s, want 409 naming bob and his role", status, b)
	}
	status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", before)
	if status != http.StatusUnauthorized || !strings.Contains(string(b), "the session has ended") {
		t.Errorf("the deleted bob's session for the new bob: %d %s, want 401 saying it has ended", status, b)
	}

	// The session expires after its TTL.
	e.clk.Advance(13 * time.Hour)
	status, b = e.call(core.RolePublic, "GET", "/api/v2/dags", nil, "Cookie", sess)
	if status != http.StatusUnauthorized || !strings.Contains(string(b), "session expired") {
		t.Errorf("expired session: %d %s", status, b)
	}
}

func TestLoginBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, b := e.call(core.RolePublic, "POST", "/api/v2/auth/login", `{"username": "alice"`)
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		t.Errorf("malformed JSON: status %d %s", status, b)
	}
	e.mustProblem(http.StatusUnprocessableEntity, core.RolePublic, "POST", "/api/v2/auth/login", map[string]string{"username": "alice"})
	if len(e.audit()) != 0 {
		t.Errorf("failed logins wrote audit entries: %+v", e.audit())
	}
}

// loginCookie logs username in and returns its session as a Cookie
// header's value.
func loginCookie(e *env, username, password string) string {
	resp := e.request(core.RolePublic, "POST", "/api/v2/auth/login", map[string]string{"username": username, "password": password})
	_ = resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return api.SessionCookie + "=" + c.Value
		}
	}
	return ""
}
