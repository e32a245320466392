package ui

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// loginCookie holds the random value the login form's CSRF token is
// derived from (there is no session yet to derive it from).
const loginCookie = "weir_login"

// request is what a page or form handler knows of its caller.
type request struct {
	User    core.User
	Role    core.Role
	CSRF    string       // the token every form of the page carries
	Session auth.Session // the login session the request came in
}

// Can reports whether the caller's role allows what needs role need; pages
// show edit controls only when it does.
func (r *request) Can(need string) bool { return r != nil && r.Role.Allows(core.Role(need)) }

// handler is a page or form handler with its caller resolved.
type handler func(w http.ResponseWriter, r *http.Request, req *request)

// page wraps a GET handler: without a valid session it redirects to the
// login page, which returns here afterwards.
func (u *UI) page(need core.Role, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := u.caller(r)
		if err != nil {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
			return
		}
		if !req.Role.Allows(need) {
			u.fail(w, r, req, http.StatusForbidden, "Your role, "+string(req.Role)+", cannot see this page; it needs "+string(need)+".")
			return
		}
		h(w, r, req)
	}
}

// form wraps a POST handler: it needs a valid session, the session's CSRF
// token in the "csrf" field, and a role of at least need. A post failing
// any of these is refused before anything is read or changed.
func (u *UI) form(need core.Role, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		req, err := u.caller(r)
		if err != nil {
			u.fail(w, r, nil, http.StatusUnauthorized, "Your session has ended; log in again.")
			return
		}
		c, _ := r.Cookie(api.SessionCookie) // caller found it
		if !u.sessions.CheckCSRF(c.Value, r.PostFormValue("csrf")) {
			u.fail(w, r, req, http.StatusForbidden, "The form did not carry this session's CSRF token, so nothing was changed. Reload the page and try again.")
			return
		}
		if !req.Role.Allows(need) {
			u.fail(w, r, req, http.StatusForbidden, "Your role, "+string(req.Role)+", cannot do this; it needs "+string(need)+" or higher. Nothing was changed.")
			return
		}
		h(w, r, req)
	}
}

// caller resolves the session cookie to the user's current role, so a role
// change or a deleted user takes effect at once.
func (u *UI) caller(r *http.Request) (*request, error) {
	c, err := r.Cookie(api.SessionCookie)
	if err != nil {
		return nil, core.ErrUnauthorized
	}
	sess, err := u.sessions.Verify(c.Value)
	if err != nil {
		return nil, err
	}
	usr, err := u.svc.SessionUser(r.Context(), sess)
	if err != nil {
		return nil, err
	}
	return &request{User: *usr, Role: core.Role(usr.Role), CSRF: u.sessions.CSRFToken(c.Value), Session: sess}, nil
}

// loginData is the login page's model.
type loginData struct {
	Next, Username, Error, CSRF string
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	u.renderLogin(w, r, http.StatusOK, loginData{Next: localPath(r.URL.Query().Get("next"))})
}

// renderLogin shows the login form with a fresh login CSRF cookie.
func (u *UI) renderLogin(w http.ResponseWriter, r *http.Request, status int, d loginData) {
	// Keep the browser's login cookie when it has one: another tab, or a
	// request the page makes, must not invalidate a form already shown.
	var v string
	if c, err := r.Cookie(loginCookie); err == nil && len(c.Value) >= 24 {
		v = c.Value
	} else {
		b := make([]byte, 18)
		_, _ = rand.Read(b) // crypto/rand.Read never fails
		v = base64.RawURLEncoding.EncodeToString(b)
	}
	http.SetCookie(w, u.cookie(r, loginCookie, v, time.Hour))
	d.CSRF = u.sessions.CSRFToken(v)
	u.render(w, r, status, "login", nil, "Log in", d)
}

func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	d := loginData{Next: localPath(r.PostFormValue("next")), Username: r.PostFormValue("username")}
	c, err := r.Cookie(loginCookie)
	if err != nil || !u.sessions.CheckCSRF(c.Value, r.PostFormValue("csrf")) {
		d.Error = "The login form had expired or did not come from this site; nothing was checked. Please try again."
		u.renderLogin(w, r, http.StatusForbidden, d)
		return
	}
	if d.Username == "" || r.PostFormValue("password") == "" {
		d.Error = "Enter a username and a password."
		u.renderLogin(w, r, http.StatusBadRequest, d)
		return
	}
	usr, err := u.svc.Login(r.Context(), u.cfg.LoginThrottle, d.Username, r.PostFormValue("password"), u.cfg.TrustedProxies.ClientAddr(r))
	var throttled *service.LoginThrottledError
	switch {
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.Seconds())
		d.Error = "Too many failed logins for this user or from this address; try again in " + throttled.Seconds() + " s."
		u.renderLogin(w, r, http.StatusTooManyRequests, d)
		return
	case errors.Is(err, service.ErrBadLogin):
		d.Error = "Invalid username or password."
		u.renderLogin(w, r, http.StatusUnauthorized, d)
		return
	case err != nil:
		u.log.ErrorContext(r.Context(), "ui login", "err", err)
		d.Error = "The login could not be checked (the api-server log has the details); please try again."
		u.renderLogin(w, r, http.StatusInternalServerError, d)
		return
	}
	expires := u.clk.Now().Add(u.cfg.SessionTTL)
	http.SetCookie(w, u.cookie(r, api.SessionCookie, u.sessions.Sign(service.NewSession(usr), expires), u.cfg.SessionTTL))
	http.SetCookie(w, u.cookie(r, loginCookie, "", 0))
	next := d.Next
	if next == "" {
		next = "/dags"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the request's login session (service.EndSession: this
// browser's, the user's others go on) and clears the cookie.
func (u *UI) logout(w http.ResponseWriter, r *http.Request, req *request) {
	if err := u.svc.EndSession(r.Context(), req.Session); err != nil {
		u.log.ErrorContext(r.Context(), "ui logout", "err", err)
	}
	http.SetCookie(w, u.cookie(r, api.SessionCookie, "", 0))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// cookie builds a cookie with the UI's fixed attributes: HttpOnly,
// SameSite=Strict, Secure when configured ([api] secure_cookie) or when r
// arrived over TLS, or from a trusted proxy saying X-Forwarded-Proto:
// https ([api] trusted_proxies), kept for ttl (Max-Age, so the browser's clock need not
// agree with the server's; the session's own expiry is signed in its
// value). An empty value deletes the cookie.
func (u *UI) cookie(r *http.Request, name, value string, ttl time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(ttl / time.Second), HttpOnly: true, //nolint:gosec // Secure follows [api] secure_cookie or HTTPS
		SameSite: http.SameSiteStrictMode, Secure: u.cfg.SecureCookie || u.cfg.TrustedProxies.HTTPS(r)}
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// localPath returns p when it is a path on this site ("/..."), else "":
// a login never redirects to another site.
func localPath(p string) string {
	// Browsers drop tabs and newlines from URLs and read "\\" as "/", so
	// "/\t/evil.example" would leave the site: neither may appear anywhere.
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") ||
		strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }) {
		return ""
	}
	return p
}
