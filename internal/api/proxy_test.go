package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// POST /api/v2/auth/login sets a Secure cookie when a trusted proxy
// ([api] trusted_proxies) says the browser came over HTTPS, and not when
// a client that is no trusted proxy says so.
func TestLoginCookieBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	hash, err := auth.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		trusted []string
		secure  bool
	}{
		"loopback proxy trusted": {[]string{"127.0.0.1", "::1"}, true},
		"no trusted proxy":       {nil, false},
		"another proxy trusted":  {[]string{"10.0.0.0/8"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := sqlitetest.Open(t)
			if err := st.UserUpsert(t.Context(), &core.User{Username: "alice", Role: string(core.RoleOp), PasswordHash: hash, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			proxies, err := auth.ParseTrustedProxies(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef0123456789abcdef"), LogFolder: t.TempDir(), TrustedProxies: proxies})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/auth/login", strings.NewReader(`{"username":"alice","password":"s3cret"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-Proto", "https")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("login: %d", resp.StatusCode)
			}
			if got := strings.Contains(resp.Header.Get("Set-Cookie"), "; Secure"); got != tc.secure {
				t.Errorf("session cookie %q: Secure %v, want %v", resp.Header.Get("Set-Cookie"), got, tc.secure)
			}
		})
	}
}
