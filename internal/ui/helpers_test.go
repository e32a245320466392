package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/ui"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// password is every test user's password.
const password = "pw-for-tests"

// onEachEngine runs fn as a parallel subtest on SQLite and on PostgreSQL.
func onEachEngine(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, sqlitetest.Open(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, postgrestest.Open(t))
	})
}

// env is the UI served on loopback over one store, with a user per role
// (named after it) and the "etl" DAG.
type env struct {
	t    *testing.T
	st   store.Store
	clk  *clocktest.Clock
	srv  *httptest.Server
	logs string // the log folder
	dags string // the DAGs folder
}

// envOption changes how newEnv serves the UI.
type envOption func(cfg *ui.Config, tls *bool)

// withConfig changes the UI's configuration.
func withConfig(f func(cfg *ui.Config)) envOption { return func(cfg *ui.Config, _ *bool) { f(cfg) } }

// overTLS serves the UI over HTTPS (a test certificate the browsers trust).
func overTLS() envOption { return func(_ *ui.Config, tls *bool) { *tls = true } }

func newEnv(t *testing.T, st store.Store, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, st: st, clk: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), logs: t.TempDir(), dags: t.TempDir()}
	hash, err := auth.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []core.Role{core.RoleViewer, core.RoleOp, core.RoleAdmin} {
		if err := st.UserUpsert(t.Context(), &core.User{Username: string(r), Role: string(r), PasswordHash: hash,
			CreatedAt: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	e.sync(core.DAG{DagID: "etl", Description: "extract, transform, load", Tags: []string{"demo"},
		Tasks: []core.Task{{TaskID: "extract", Operator: "noop"}, {TaskID: "load", Operator: "noop", DependsOn: []string{"extract"}}}})
	svc := service.New(service.Config{Store: st, Clock: e.clk})
	cfg := ui.Config{Store: st, Service: svc, Clock: e.clk, LogFolder: e.logs, DagsFolder: e.dags, SecretKey: []byte("0123456789abcdef0123456789abcdef")}
	tls := false
	for _, o := range opts {
		o(&cfg, &tls)
	}
	h, err := ui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tls {
		e.srv = httptest.NewTLSServer(h)
	} else {
		e.srv = httptest.NewServer(h)
	}
	t.Cleanup(e.srv.Close)
	return e
}

// sync records a DAG as the DAG processor would.
func (e *env) sync(d core.DAG) int64 {
	e.t.Helper()
	b, _ := json.Marshal(d)
	v, _, err := e.st.DagSync(context.Background(), &store.DagSyncParams{Spec: d, Hash: string(b), Now: e.clk.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// browser is one cookie-keeping client that does not follow redirects.
type browser struct {
	e *env
	c *http.Client
	// header is sent with every request (a proxy's X-Forwarded-*).
	header http.Header
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, Transport: e.srv.Client().Transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// loggedIn returns a browser with a session of the user named after role.
func (e *env) loggedIn(role core.Role) *browser {
	e.t.Helper()
	b := e.browser()
	if resp := b.login(string(role), password, ""); resp.status != http.StatusSeeOther {
		e.t.Fatalf("login as %s: status %d, body:\n%s", role, resp.status, resp.body)
	}
	return b
}

// response is a read response.
type response struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) response {
	b.e.t.Helper()
	for k, v := range b.header {
		req.Header[k] = v
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (b *browser) get(path string) response {
	b.e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.e.srv.URL+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) response {
	b.e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// login fills and posts the login form as a person would.
func (b *browser) login(user, pw, next string) response {
	b.e.t.Helper()
	page := b.get("/login?next=" + url.QueryEscape(next))
	return b.post("/login", url.Values{"csrf": {csrfOf(b.e.t, page.body)}, "username": {user}, "password": {pw},
		"next": {next}})
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf returns the CSRF token of the page's first form.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in page:\n%s", page)
	}
	return m[1]
}

// dag returns a DAG's row.
func (e *env) dag(id string) *core.DagModel {
	e.t.Helper()
	d, err := e.st.DagGet(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}
