package ui_test

import (
	"net/http"
	"strings"
	"testing"

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

// Login cookies are Secure when [api] secure_cookie says so, and on a
// request that arrived over TLS; not otherwise (plain-HTTP installs must
// still log in).
func TestSecureCookie(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		opts   []envOption
		secure bool
	}{
		"plain HTTP":                    {nil, false},
		"plain HTTP with secure_cookie": {[]envOption{withConfig(func(c *ui.Config) { c.SecureCookie = true })}, true},
		"TLS":                           {[]envOption{overTLS()}, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sqlitetest.Open(t), tc.opts...)
			b := e.browser()
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
