package ui

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// The admin page's forms: each calls the service method the REST API and
// the CLI call (authorized for admin and audited there), then returns to
// the admin page. No rule lives here beyond reading the form.

// adminPath is where every admin form returns.
const adminPath = "/admin"

// adminDone ends an admin form: err (from the service) is shown with its
// status, else the browser returns to the admin page's section.
func (u *UI) adminDone(w http.ResponseWriter, r *http.Request, req *request, section string, err error) {
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	http.Redirect(w, r, adminPath+"#"+section, http.StatusSeeOther)
}

// savePool creates a pool (mode=create) or changes one's slots and
// description (mode=update).
func (u *UI) savePool(w http.ResponseWriter, r *http.Request, req *request) {
	ch := service.PoolChange{Name: strings.TrimSpace(r.PostFormValue("name")), Mode: service.PoolUpdate}
	if r.PostFormValue("mode") == "create" {
		ch.Mode = service.PoolCreate
	}
	s := r.PostFormValue("slots")
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		u.fail(w, r, req, http.StatusBadRequest, "slots must be a whole number, not "+strconv.Quote(s)+"; nothing was changed.")
		return
	}
	desc := r.PostFormValue("description")
	ch.Slots, ch.Description = &n, &desc
	_, err = u.svc.SavePool(r.Context(), actor(req), ch)
	u.adminDone(w, r, req, "pools", err)
}

// deletePool deletes a pool.
func (u *UI) deletePool(w http.ResponseWriter, r *http.Request, req *request) {
	u.adminDone(w, r, req, "pools", u.svc.DeletePool(r.Context(), actor(req), r.PathValue("name")))
}

// saveConnection stores a connection (replacing one with the same id only
// when replace is checked). The URI is never shown back, not even in an
// error: the service's errors do not echo it.
func (u *UI) saveConnection(w http.ResponseWriter, r *http.Request, req *request) {
	c := core.Connection{ID: strings.TrimSpace(r.PostFormValue("connection_id")), URI: r.PostFormValue("uri")}
	u.adminDone(w, r, req, "connections", u.svc.SaveConnection(r.Context(), actor(req), c, r.PostFormValue("replace") == "true"))
}

// deleteConnection deletes a connection.
func (u *UI) deleteConnection(w http.ResponseWriter, r *http.Request, req *request) {
	u.adminDone(w, r, req, "connections", u.svc.DeleteConnection(r.Context(), actor(req), r.PathValue("id")))
}

// saveUser creates a user or sets one's password and role.
func (u *UI) saveUser(w http.ResponseWriter, r *http.Request, req *request) {
	name, pw := strings.TrimSpace(r.PostFormValue("username")), r.PostFormValue("password")
	if pw == "" {
		u.fail(w, r, req, http.StatusBadRequest, "password must not be empty; nothing was changed.")
		return
	}
	u.adminDone(w, r, req, "users", u.svc.SaveUser(r.Context(), actor(req), name, pw, core.Role(r.PostFormValue("role"))))
}

// tokenData is the page that shows a new token's secret, once.
type tokenData struct {
	Username, Name, Secret string
	Expires                *time.Time
}

// createToken issues an API token for a user and shows its secret on the
// answer page, the one time it is ever shown (only its hash is stored).
func (u *UI) createToken(w http.ResponseWriter, r *http.Request, req *request) {
	ttl, err := parseTTL(r.PostFormValue("ttl"))
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := tokenData{Username: strings.TrimSpace(r.PostFormValue("username")), Name: strings.TrimSpace(r.PostFormValue("name"))}
	if d.Name == "" {
		d.Name = "ui"
	}
	if d.Secret, err = u.svc.CreateAPIToken(r.Context(), actor(req), d.Username, d.Name, ttl); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	if ttl > 0 {
		exp := u.clk.Now().Add(ttl)
		d.Expires = &exp
	}
	u.render(w, r, http.StatusOK, "token", req, "New API token", d)
}

// revokeToken deletes an API token.
func (u *UI) revokeToken(w http.ResponseWriter, r *http.Request, req *request) {
	u.adminDone(w, r, req, "tokens", u.svc.RevokeAPIToken(r.Context(), actor(req), r.PathValue("id")))
}

// parseTTL reads a token lifetime: "" or "0" for none, a number of days
// ("30d") or a Go duration ("12h"); anything else is core.ErrInvalid.
func parseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%w: %w", &badParam{name: "lifetime", value: s, want: "empty (no expiry), days (30d) or a duration (12h)"}, core.ErrInvalid)
}
