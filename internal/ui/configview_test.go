package ui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/ui"
)

// The configuration view lists every option with its value, passwords
// masked, to an admin only.
func TestConfigView(t *testing.T) {
	t.Parallel()
	cfg := config.Defaults(t.TempDir())
	if err := cfg.Set("database", "conn", "postgres://weir:db-s3cret@db.internal/weir"); err != nil {
		t.Fatal(err)
	}
	cfg.Connections = map[string]string{"warehouse": "postgres://etl:conn-s3cret@dw/etl"}
	e := newEnv(t, sqlitetest.Open(t), withConfig(func(c *ui.Config) { c.Settings = cfg.List() }))
	r := e.loggedIn(core.RoleAdmin).get("/admin/config")
	if r.status != http.StatusOK {
		t.Fatalf("config view: %d\n%s", r.status, r.body)
	}
	for _, want := range []string{"<code>conn</code>", "postgres://weir:***@db.internal/weir", "<code>warehouse</code>", "postgres://etl:***@dw/etl",
		"<code>secure_cookie</code>", "<code>dags_folder</code>"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("config view lacks %s", want)
		}
	}
	if strings.Contains(r.body, "s3cret") {
		t.Error("the config view shows a password")
	}
	if r := e.loggedIn(core.RoleOp).get("/admin/config"); r.status != http.StatusForbidden {
		t.Errorf("op GET /admin/config: %d, want 403", r.status)
	}
}

// Login cookies are Secure when [api] secure_cookie says so, on a request
// that arrived over TLS, and on one from a trusted proxy ([api]
// trusted_proxies) saying X-Forwarded-Proto: https; not otherwise —
// plain-HTTP installs must still log in, and a client that is not a
// trusted proxy cannot make itself one by sending the header.
func TestSecureCookie(t *testing.T) {
	t.Parallel()
	https := http.Header{"X-Forwarded-Proto": {"https"}}
	loopbackTrusted := withConfig(func(c *ui.Config) {
		var err error
		if c.TrustedProxies, err = auth.ParseTrustedProxies([]string{"127.0.0.0/8", "::1"}); err != nil {
			t.Fatal(err)
		}
	})
	for name, tc := range map[string]struct {
		opts   []envOption
		header http.Header
		secure bool
	}{
		"plain HTTP":                          {nil, nil, false},
		"plain HTTP with secure_cookie":       {[]envOption{withConfig(func(c *ui.Config) { c.SecureCookie = true })}, nil, true},
		"TLS":                                 {[]envOption{overTLS()}, nil, true},
		"trusted proxy, https":                {[]envOption{loopbackTrusted}, https, true},
		"trusted proxy, http":                 {[]envOption{loopbackTrusted}, http.Header{"X-Forwarded-Proto": {"http"}}, false},
		"trusted proxy, no header":            {[]envOption{loopbackTrusted}, nil, false},
		"untrusted client claiming https":     {nil, https, false},
		"other proxy trusted, claiming https": {[]envOption{withConfig(func(c *ui.Config) { c.TrustedProxies, _ = auth.ParseTrustedProxies([]string{"10.0.0.0/8"}) })}, https, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sqlitetest.Open(t), tc.opts...)
			b := e.browser()
			b.header = tc.header
			login := b.get("/login")
			if got := strings.Contains(login.header.Get("Set-Cookie"), "; Secure"); got != tc.secure {
				t.Errorf("login form cookie %q: Secure %v, want %v", login.header.Get("Set-Cookie"), got, tc.secure)
			}
			r := b.login("viewer", password, "")
			if r.status != http.StatusSeeOther {
				t.Fatalf("login: %d", r.status)
			}
			for _, c := range r.header.Values("Set-Cookie") {
				if got := strings.Contains(c, "; Secure"); got != tc.secure {
					t.Errorf("cookie %q: Secure %v, want %v", c, got, tc.secure)
				}
			}
		})
	}
}

// Behind a trusted proxy, the login throttle counts failures per client
// (X-Forwarded-For), not per proxy: one client's wrong passwords do not
// lock out another's logins through the same proxy; a client that is not
// a trusted proxy cannot dodge its count by sending the header.
func TestLoginThrottlePerForwardedClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t), withConfig(func(c *ui.Config) { c.TrustedProxies, _ = auth.ParseTrustedProxies([]string{"127.0.0.1"}) }))
	guesser := e.browser()
	guesser.header = http.Header{"X-Forwarded-For": {"203.0.113.9"}}
	for i := range 5 {
		if r := guesser.login(fmt.Sprintf("nobody%d", i), "wrong", ""); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong login: %d, want 401", r.status)
		}
	}
	if r := guesser.login("viewer", password, ""); r.status != http.StatusTooManyRequests {
		t.Fatalf("the guessing client's next login: %d, want 429 (its address is throttled)", r.status)
	}
	other := e.browser()
	other.header = http.Header{"X-Forwarded-For": {"198.51.100.7"}}
	if r := other.login("viewer", password, ""); r.status != http.StatusSeeOther {
		t.Fatalf("another client through the same proxy: %d, want 303 (logged in)", r.status)
	}

	direct := newEnv(t, sqlitetest.Open(t)) // no trusted proxies: the header is the client's own claim
	forger := direct.browser()
	for i := range 5 {
		forger.header = http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i)}}
		if r := forger.login(fmt.Sprintf("nobody%d", i), "wrong", ""); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong login: %d, want 401", r.status)
		}
	}
	forger.header = http.Header{"X-Forwarded-For": {"192.0.2.1"}}
	if r := forger.login("viewer", password, ""); r.status != http.StatusTooManyRequests {
		t.Fatalf("a client forging X-Forwarded-For: %d, want 429 (counted by its own address)", r.status)
	}
}
