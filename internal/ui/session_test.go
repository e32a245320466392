package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// A person who is not logged in is sent to the login page and back to the
// page they asked for; a wrong password is told so; logout ends the
// session, not the same user's session in another browser.
func TestLoginLogout(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		b := e.browser()
		r := b.get("/dags?tag=demo")
		if r.status != http.StatusFound || r.header.Get("Location") != "/login?next="+url.QueryEscape("/dags?tag=demo") {
			t.Fatalf("anonymous GET /dags: %d to %q, want 302 to the login page with next", r.status, r.header.Get("Location"))
		}
		r = b.login("op", "wrong", "/dags?tag=demo")
		if r.status != http.StatusUnauthorized || !strings.Contains(r.body, "Invalid username or password") {
			t.Fatalf("wrong password: %d, want 401 saying so; body:\n%s", r.status, r.body)
		}
		r = b.login("op", password, "/dags?tag=demo")
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dags?tag=demo" {
			t.Fatalf("login: %d to %q, want 303 back to /dags?tag=demo", r.status, r.header.Get("Location"))
		}
		cookie := r.header.Get("Set-Cookie")
		for _, attr := range []string{"weir_session=", "HttpOnly", "SameSite=Strict"} {
			if !strings.Contains(cookie, attr) {
				t.Errorf("session cookie %q lacks %s", cookie, attr)
			}
		}
		other := e.browser()
		if r := other.login("op", password, "/dags"); r.status != http.StatusSeeOther {
			t.Fatalf("login in another browser: %d", r.status)
		}
		page := b.get("/dags")
		if page.status != http.StatusOK || !strings.Contains(page.body, ">etl</a>") || !strings.Contains(page.body, "op <span class=\"role\">(op)") {
			t.Fatalf("DAGs page after login: %d; want the etl DAG and the user; body:\n%s", page.status, page.body)
		}
		r = b.post("/logout", url.Values{"csrf": {csrfOf(t, page.body)}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" {
			t.Fatalf("logout: %d to %q, want 303 to /login", r.status, r.header.Get("Location"))
		}
		if r := b.get("/dags"); r.status != http.StatusFound {
			t.Errorf("GET /dags after logout: %d, want 302 to the login page", r.status)
		}
		// The session itself has ended: its cookie, replayed, is refused.
		stale := &http.Cookie{Name: "weir_session", Value: strings.TrimPrefix(strings.Split(cookie, ";")[0], "weir_session=")}
		req, _ := http.NewRequest(http.MethodGet, b.e.srv.URL+"/dags", nil)
		req.AddCookie(stale)
		if r := b.do(req); r.status != http.StatusFound {
			t.Errorf("GET /dags with the logged-out session's cookie: %d, want 302 to the login page", r.status)
		}
		if r := other.get("/dags"); r.status != http.StatusOK {
			t.Errorf("GET /dags in the other browser after the logout: %d, want its session to go on", r.status)
		}
	})
}

// A login only ever returns to a page of this site.
func TestLoginNextStaysOnSite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t))
	for _, next := range []string{"//evil.example/x", "https://evil.example/", `/\evil.example`, ""} {
		r := e.browser().login("viewer", password, next)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dags" {
			t.Errorf("login with next %q: %d to %q, want 303 to /dags", next, r.status, r.header.Get("Location"))
		}
	}
}

// A login post that did not come from the login form (no login cookie and
// token) is refused without checking the password.
func TestLoginNeedsCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t))
	b := e.browser()
	r := b.post("/login", url.Values{"username": {"admin"}, "password": {password}})
	if r.status != http.StatusForbidden || strings.Contains(r.header.Get("Set-Cookie"), "weir_session=") {
		t.Fatalf("login without CSRF: %d, cookies %q; want 403 and no session", r.status, r.header.Get("Set-Cookie"))
	}
	b.get("/login") // a login cookie, but a forged token
	r = b.post("/login", url.Values{"csrf": {"forged"}, "username": {"admin"}, "password": {password}})
	if r.status != http.StatusForbidden {
		t.Fatalf("login with a forged token: %d, want 403", r.status)
	}
}

// After five wrong passwords even the right one waits (429, Retry-After),
// as on the REST API.
func TestLoginThrottled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t))
	b := e.browser()
	for range 5 {
		if r := b.login("admin", "wrong", ""); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d, want 401", r.status)
		}
	}
	r := b.login("admin", password, "")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "Too many failed logins") {
		t.Fatalf("right password while throttled: %d, Retry-After %q; want 429 with a wait; body:\n%s",
			r.status, r.header.Get("Retry-After"), r.body)
	}
}

// A form posted without the session's CSRF token, or with another
// session's, is refused and changes nothing.
func TestFormsNeedCSRF(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		op, other := e.loggedIn(core.RoleOp), e.loggedIn(core.RoleAdmin)
		otherToken := csrfOf(t, other.get("/dags").body)
		for name, form := range map[string]url.Values{
			"no token":              {"paused": {"true"}},
			"another session token": {"paused": {"true"}, "csrf": {otherToken}},
		} {
			r := op.post("/dags/etl/paused", form)
			if r.status != http.StatusForbidden || !strings.Contains(r.body, "CSRF") {
				t.Errorf("%s: %d, want 403 naming the CSRF token; body:\n%s", name, r.status, r.body)
			}
		}
		if e.dag("etl").IsPaused {
			t.Error("a post without its CSRF token paused the DAG")
		}
	})
}

// A viewer sees no pause buttons and is refused when it posts anyway; an op
// pauses, and the change is audited under its name.
func TestRolesOnPause(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		viewer := e.loggedIn(core.RoleViewer)
		page := viewer.get("/dags")
		if strings.Contains(page.body, `action="/dags/etl/paused"`) || !strings.Contains(page.body, "▶ active") {
			t.Fatalf("viewer's DAGs page has a pause form (or no state); body:\n%s", page.body)
		}
		r := viewer.post("/dags/etl/paused", url.Values{"paused": {"true"}, "csrf": {csrfOf(t, page.body)}})
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "viewer") {
			t.Fatalf("viewer pause: %d, want 403 naming the role; body:\n%s", r.status, r.body)
		}
		if e.dag("etl").IsPaused {
			t.Fatal("viewer paused the DAG")
		}

		op := e.loggedIn(core.RoleOp)
		page = op.get("/dags?q=et")
		r = op.post("/dags/etl/paused", url.Values{"paused": {"true"}, "csrf": {csrfOf(t, page.body)}, "back": {"/dags?q=et"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dags?q=et" {
			t.Fatalf("op pause: %d to %q, want 303 back to the list", r.status, r.header.Get("Location"))
		}
		if !e.dag("etl").IsPaused {
			t.Fatal("op pause did not pause the DAG")
		}
		if !strings.Contains(op.get("/dags").body, `aria-label="Unpause etl"`) {
			t.Error("after pausing, the list offers no unpause button")
		}
		audit, err := st.AuditLogList(t.Context(), &store.AuditLogListParams{Action: "dag.pause", Target: "etl"})
		if err != nil || len(audit) != 1 || audit[0].User != "op" {
			t.Errorf("audit of the pause = %+v, %v; want one entry by op", audit, err)
		}
		r = op.post("/dags/etl/paused", url.Values{"paused": {"maybe"}, "csrf": {csrfOf(t, page.body)}})
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "paused must be true or false") {
			t.Errorf("pause with a bad value: %d, want 400 naming the field; body:\n%s", r.status, r.body)
		}
		r = op.post("/dags/nope/paused", url.Values{"paused": {"true"}, "csrf": {csrfOf(t, page.body)}})
		if r.status != http.StatusNotFound || !strings.Contains(r.body, "nope") {
			t.Errorf("pause of an unknown DAG: %d, want 404 naming it; body:\n%s", r.status, r.body)
		}
	})
}

// Showing the login page again (another tab, a request the page makes)
// keeps the login cookie, so a form already shown still posts.
func TestLoginFormSurvivesAnotherLoginPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlitetest.Open(t))
	b := e.browser()
	form := b.get("/login")
	b.get("/login?next=%2Ffavicon.ico")
	r := b.post("/login", url.Values{"csrf": {csrfOf(t, form.body)}, "username": {"viewer"}, "password": {password}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("login with the first form after a second login page: %d, want 303:\n%s", r.status, r.body)
	}
	if r := b.get("/favicon.ico"); r.status != http.StatusNotFound {
		t.Errorf("favicon: %d, want 404 (not a redirect to log in)", r.status)
	}
}
