package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

// A username and password buy a bearer token with the user's role, which
// expires after a day; a wrong password buys nothing.
func TestAuthTokenForPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hash, err := auth.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	e.addUser("vera", core.RoleViewer, hash)

	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "POST", "/api/v2/auth/token",
		map[string]string{"username": "vera", "password": "wrong"}, "invalid username or password")

	var tok struct {
		AccessToken string    `json:"access_token"`
		TokenType   string    `json:"token_type"`
		Username    string    `json:"username"`
		Role        core.Role `json:"role"`
		ExpiresAt   time.Time `json:"expires_at"`
	}
	e.must(http.StatusCreated, core.RolePublic, "POST", "/api/v2/auth/token",
		map[string]string{"username": "vera", "password": "s3cret"}, &tok)
	if tok.AccessToken == "" || tok.TokenType != "bearer" || tok.Username != "vera" || tok.Role != core.RoleViewer ||
		!tok.ExpiresAt.Equal(e.clk.Now().Add(api.DefaultLoginTokenTTL)) {
		t.Fatalf("token response %+v", tok)
	}
	// Airflow 3's clients ask at /auth/token: the same token.
	var airflow struct {
		AccessToken string `json:"access_token"`
	}
	e.must(http.StatusCreated, core.RolePublic, "POST", api.AirflowTokenPath, map[string]string{"username": "vera", "password": "s3cret"}, &airflow)
	if airflow.AccessToken == "" || airflow.AccessToken == tok.AccessToken {
		t.Errorf("POST %s gave %+v, want a token of its own", api.AirflowTokenPath, airflow)
	}
	bearer := "Bearer " + tok.AccessToken
	status, b := e.call(core.RolePublic, "GET", "/api/v2/auth/me", nil, "Authorization", bearer)
	if status != http.StatusOK || string(b) != `{"username":"vera","role":"viewer"}`+"\n" {
		t.Errorf("GET /auth/me: %d %s", status, b)
	}
	// The token carries vera's role: reading is fine, pausing is not.
	if status, b := e.call(core.RolePublic, "PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": true}, "Authorization", bearer); status != http.StatusForbidden {
		t.Errorf("viewer token pausing: %d %s", status, b)
	}
	if !e.hasAudit("vera", "api_token.create", "vera") || !e.hasAudit("vera", "auth.login", "vera") {
		t.Errorf("audit log lacks vera's login and token: %+v", e.audit())
	}

	e.clk.Advance(api.DefaultLoginTokenTTL)
	status, b = e.call(core.RolePublic, "GET", "/api/v2/auth/me", nil, "Authorization", bearer)
	if status != http.StatusUnauthorized {
		t.Errorf("expired token: %d %s", status, b)
	}
}
