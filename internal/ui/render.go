package ui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

//go:embed templates
var templateFS embed.FS

// view is what every page template receives: the caller (nil on the login
// page), the page's title and its own model.
type view struct {
	Req   *request
	Title string
	Data  any
	Now   time.Time
}

// parsePages parses each page template together with the layout and the
// shared partials, one template set per page.
func (u *UI) parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"static":        u.static.path,
		"state":         stateOf,
		"fmtTime":       fmtTime,
		"ago":           ago,
		"pathEsc":       pathEscape,
		"firstLine":     func(s string) string { first, _, _ := strings.Cut(s, "\n"); return first },
		"headOf":        func(req *request, d core.DagModel, back string) dagHead { return dagHead{Req: req, Dag: d, Back: back} },
		"statusOptions": statusOptions,
		"marks":         func() []string { return []string{"success", "failed"} },
		"panelOf":       func(req *request, p *statePanel) panelView { return panelView{Req: req, Panel: p} },
		"lower":         strings.ToLower,
		"bytes":         sizeOf,
		"tabOf":         func(dagID, tab string) map[string]string { return map[string]string{"DagID": dagID, "Tab": tab} },
		"stateEditRole": func() string { return stateEditRole },
		"eventsOf": func(events []eventRow, showAsset bool) eventsView {
			return eventsView{Events: events, ShowAsset: showAsset}
		},
	}
	shared := []string{"templates/layout.html", "templates/parts.html"}
	pages, err := templateFS.ReadDir("templates/pages")
	if err != nil {
		return nil, fmt.Errorf("ui: read page templates: %w", err)
	}
	out := map[string]*template.Template{}
	for _, p := range pages {
		name := strings.TrimSuffix(p.Name(), path.Ext(p.Name()))
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, append(shared, "templates/pages/"+p.Name())...)
		if err != nil {
			return nil, fmt.Errorf("ui: parse page %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page (into a buffer first, so a template error becomes a
// clean 500) with the UI's security headers.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, page string, req *request, title string, data any) {
	var buf bytes.Buffer
	err := u.pages[page].ExecuteTemplate(&buf, "layout", view{Req: req, Title: title, Data: data, Now: u.clk.Now()})
	if err != nil {
		u.log.ErrorContext(r.Context(), "ui render", "page", page, "err", err)
		http.Error(w, "internal error rendering the page; the api-server log has the details", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderPart renders one named template of a page (a live part) for the
// caller, as the page itself would.
func (u *UI) renderPart(page, name string, req *request, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := u.pages[page].ExecuteTemplate(&buf, name, view{Req: req, Data: data, Now: u.clk.Now()}); err != nil {
		return nil, fmt.Errorf("render %s of page %s: %w", name, page, err)
	}
	return buf.Bytes(), nil
}

// fail shows the error page with status and a message for the user.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, req *request, status int, msg string) {
	d := errorData{Msg: msg}
	if r.Method == http.MethodPost {
		d.Back = localPath(r.PostFormValue("back")) // the form's page, to try again from
	}
	u.render(w, r, status, "error", req, http.StatusText(status), d)
}

// errorData is the error page's model: the message, and the page of the
// form that failed ("" when none).
type errorData struct{ Msg, Back string }

// failErr shows err on the error page with the status the REST API would
// answer (api.StatusOf); an unexpected error is logged and shown without
// its internals.
func (u *UI) failErr(w http.ResponseWriter, r *http.Request, req *request, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		u.log.ErrorContext(r.Context(), "ui request", "path", r.URL.Path, "err", err)
		msg = "Internal error; the api-server log has the details."
	}
	u.fail(w, r, req, status, msg)
}

// option is one choice of a select.
type option struct {
	Value    string
	Selected bool
}

// statusOptions are the choices of a status filter showing current.
func statusOptions(current string, values ...string) []option {
	out := []option{{Value: "all", Selected: current == "all"}}
	for _, v := range values {
		out = append(out, option{Value: v, Selected: current == v})
	}
	return out
}

// dagHead is the model of the "daghead" partial.
type dagHead struct {
	Req  *request
	Dag  core.DagModel
	Back string
}

// eventsView is the model of the "events" partial: asset events, with
// their asset's name unless they are all one asset's (its own page).
type eventsView struct {
	Events    []eventRow
	ShowAsset bool
}

// panelView is the model of the "statepanel" partial.
type panelView struct {
	Req   *request
	Panel *statePanel
}

// statusOf is the HTTP status of an error, as the REST API answers it.
func statusOf(err error) int { return api.StatusOf(err) }

// fmtTime formats a time for a page (UTC, to the second); "—" for nil.
func fmtTime(t any) string {
	switch v := t.(type) {
	case time.Time:
		if v.IsZero() {
			return "—"
		}
		return v.UTC().Format("2006-01-02 15:04:05Z")
	case *time.Time:
		if v == nil {
			return "—"
		}
		return fmtTime(*v)
	}
	return fmt.Sprint(t)
}

// ago says how long before now t was (or how long after, "in ...").
func ago(now time.Time, t *time.Time) string {
	if t == nil {
		return ""
	}
	if d := now.Sub(*t); d >= 0 {
		return roundDur(d) + " ago"
	}
	return "in " + roundDur(t.Sub(now))
}

// roundDur prints d to a unit a person reads at a glance.
func roundDur(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	}
	return fmt.Sprintf("%d d", int(d/(24*time.Hour)))
}

// pathEscape escapes one path segment (DAG and run ids may hold any
// character the id rules allow).
func pathEscape(s string) string { return url.PathEscape(s) }

// sizeOf writes a byte count for people: "512 bytes", "3.4 KiB", "1.2 MiB".
func sizeOf(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
