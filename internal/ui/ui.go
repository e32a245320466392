// Package ui is Weir's web UI: server-rendered pages (html/template) with
// their templates, stylesheet and script embedded in the binary, so `go
// build` yields the whole product. The api-server mounts it at "/".
//
// Pages read through the store's list methods, paged in the database, and
// change nothing themselves: every form posts to a handler that calls the
// same service method the REST API calls (package service), so a change
// from the UI is authorized, audited and notified exactly as one from the
// API or the CLI. A browser logs in with the same signed session cookie as
// the REST API (auth.Sessions); every form carries a CSRF token derived
// from it, and a post without one is refused before anything is read.
// Reading works without JavaScript; the script only adds live updates.
package ui

import (
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// Config is what the UI needs. Store, Service and SecretKey are required.
type Config struct {
	// Store is read for the pages; changes go through Service.
	Store Reader
	// Service carries out every change a form asks for.
	Service *service.Service
	// State reads task and asset state and makes the audited admin edits
	// of the state panels; nil = statestore.New over Store with defaults.
	State *statestore.Service
	// LogFolder is [logging] base_log_folder, where task logs are read
	// when Logs is nil.
	LogFolder string
	// Logs is where task logs are read ([logging] log_store); nil =
	// tasklog.Folder(LogFolder).
	Logs tasklog.Logs
	// DagsFolder is [core] dags_folder: the source view shows a DAG's file
	// only from inside it; "" = no source view.
	DagsFolder string
	// SecretKey signs session cookies; the REST API's key, so one login
	// serves both.
	SecretKey []byte
	// PreviousSecretKeys are earlier session keys still accepted during a
	// rotation ([api_auth] secret_key's later keys); SecretKey alone signs.
	PreviousSecretKeys [][]byte
	// SessionTTL is how long a login lasts; 0 = 12 hours.
	SessionTTL time.Duration
	// SecureCookie sets the Secure attribute on cookies ([api]
	// secure_cookie: users come through HTTPS); a request that arrived
	// over TLS gets Secure cookies regardless.
	SecureCookie bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-Proto
	// (https: Secure cookies) and X-Forwarded-For (the client the login
	// throttle counts) are believed; nil = none.
	TrustedProxies auth.TrustedProxies
	// Settings is the configuration the admin's config view shows
	// (config.Config.List: passwords already masked); nil = none.
	Settings []config.Option
	// LoginThrottle backs off repeated failed logins; share the REST API's
	// so both count together. nil = auth.NewLoginThrottle's defaults.
	LoginThrottle *auth.LoginThrottle
	// Clock is "now" for the pages; nil = core.SystemClock.
	Clock core.Clock
	// Logger receives unexpected errors; nil = discard.
	Logger *slog.Logger
}

// UI serves the web UI. Create it with New.
type UI struct {
	cfg      Config
	st       Reader
	svc      *service.Service
	states   *statestore.Service
	clk      core.Clock
	log      *slog.Logger
	sessions auth.Sessions
	static   *assets
	pages    map[string]*template.Template
	mux      *http.ServeMux
}

// New returns the UI's handler; mount it at "/".
func New(cfg Config) (*UI, error) {
	if cfg.Store == nil || cfg.Service == nil {
		return nil, errors.New("ui: Config.Store and Config.Service are required")
	}
	if len(cfg.SecretKey) < 16 {
		return nil, errors.New("ui: Config.SecretKey must be at least 16 bytes (it signs session cookies)")
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Logs == nil {
		cfg.Logs = tasklog.Folder(cfg.LogFolder)
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.State == nil {
		st, ok := cfg.Store.(store.Store)
		if !ok {
			return nil, errors.New("ui: Config.State is required when Config.Store is not a whole store.Store")
		}
		cfg.State = statestore.New(st, cfg.Clock, statestore.Config{DefaultRetentionDays: statestore.DefaultRetentionDays,
			CheckCursor: service.WatcherCursorCheck(st, cfg.Service.Triggers())})
	}
	if cfg.LoginThrottle == nil {
		cfg.LoginThrottle = auth.NewLoginThrottle(auth.ThrottleConfig{}, cfg.Clock)
	}
	u := &UI{cfg: cfg, st: cfg.Store, svc: cfg.Service, states: cfg.State, clk: cfg.Clock, log: cfg.Logger,
		sessions: auth.Sessions{Key: cfg.SecretKey, VerifyKeys: cfg.PreviousSecretKeys, Clock: cfg.Clock}}
	var err error
	if u.static, err = loadAssets(); err != nil {
		return nil, err
	}
	if u.pages, err = u.parsePages(); err != nil {
		return nil, err
	}
	u.routes()
	return u, nil
}

// ServeHTTP serves one request.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.mux.ServeHTTP(w, r) }

// stateRoutes registers the state panel's three forms under base for
// the scope scope names.
func (u *UI) stateRoutes(m *http.ServeMux, base string, scope scopeFunc) {
	m.HandleFunc("POST "+base+"/set", u.form(statestore.EditRole, u.stateSet(scope)))
	m.HandleFunc("POST "+base+"/delete", u.form(statestore.EditRole, u.stateDelete(scope)))
	m.HandleFunc("POST "+base+"/clear", u.form(statestore.EditRole, u.stateClear(scope)))
}

// routes registers every page and form handler.
func (u *UI) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /static/{hash}/{name}", u.static.serve)
	m.HandleFunc("GET /favicon.ico", http.NotFound) // browsers ask for it; not a page to log in for
	m.HandleFunc("GET /login", u.loginPage)
	m.HandleFunc("POST /login", u.login)
	m.HandleFunc("POST /logout", u.form(core.RoleViewer, u.logout))
	m.HandleFunc("GET /{$}", u.page(core.RoleViewer, func(w http.ResponseWriter, r *http.Request, _ *request) {
		http.Redirect(w, r, "/dags", http.StatusFound)
	}))
	m.HandleFunc("GET /dags", u.page(core.RoleViewer, u.dagsPage))
	m.HandleFunc("POST /dags/{dag_id}/paused", u.form(core.RoleOp, u.setPaused))
	m.HandleFunc("GET /dags/{dag_id}", u.page(core.RoleViewer, u.dagPage))
	m.HandleFunc("GET /dags/{dag_id}/grid", u.page(core.RoleViewer, u.gridFragment))
	m.HandleFunc("GET /dags/{dag_id}/graph", u.page(core.RoleViewer, u.graphPage))
	m.HandleFunc("GET /dags/{dag_id}/durations", u.page(core.RoleViewer, u.durationsPage))
	m.HandleFunc("GET /dags/{dag_id}/runs", u.page(core.RoleViewer, u.runsPage))
	m.HandleFunc("GET /dags/{dag_id}/source", u.page(core.RoleViewer, u.sourcePage))
	m.HandleFunc("GET /dags/{dag_id}/trigger", u.page(core.RoleOp, u.triggerPage))
	m.HandleFunc("POST /dags/{dag_id}/trigger", u.form(core.RoleOp, u.trigger))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}", u.page(core.RoleViewer, u.runPage))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}/live", u.page(core.RoleViewer, u.runFragment))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}/callbacks/{callback_id}", u.page(core.RoleViewer, u.callbackPage))
	m.HandleFunc("POST /dags/{dag_id}/runs/{run_id}/clear", u.form(core.RoleOp, u.clearRun))
	m.HandleFunc("POST /dags/{dag_id}/runs/{run_id}/mark", u.form(core.RoleOp, u.markRun))
	m.HandleFunc("POST /dags/{dag_id}/actions", u.form(core.RoleOp, u.gridAction))
	m.HandleFunc("POST /dags/{dag_id}/runs/{run_id}/tasks/{task_id}/mark", u.form(core.RoleOp, u.markTI))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}/tasks/{task_id}", u.page(core.RoleViewer, u.tiPage))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}/tasks/{task_id}/live", u.page(core.RoleViewer, u.tiFragment))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}/tasks/{task_id}/rendered", u.page(core.RoleViewer, u.renderedPage))
	m.HandleFunc("GET /dags/{dag_id}/runs/{run_id}/tasks/{task_id}/log", u.page(core.RoleViewer, u.logDownload))
	u.stateRoutes(m, "/dags/{dag_id}/runs/{run_id}/tasks/{task_id}/state", taskScope)
	m.HandleFunc("GET /audit", u.page(core.RoleViewer, u.auditPage))
	m.HandleFunc("GET /admin", u.page(core.RoleAdmin, u.adminPage))
	m.HandleFunc("GET /admin/config", u.page(core.RoleAdmin, u.configPage))
	m.HandleFunc("POST /admin/pools", u.form(core.RoleAdmin, u.savePool))
	m.HandleFunc("POST /admin/pools/{name}/delete", u.form(core.RoleAdmin, u.deletePool))
	m.HandleFunc("POST /admin/connections", u.form(core.RoleAdmin, u.saveConnection))
	m.HandleFunc("POST /admin/connections/{id}/delete", u.form(core.RoleAdmin, u.deleteConnection))
	m.HandleFunc("POST /admin/users", u.form(core.RoleAdmin, u.saveUser))
	m.HandleFunc("POST /admin/tokens", u.form(core.RoleAdmin, u.createToken))
	m.HandleFunc("POST /admin/tokens/{id}/revoke", u.form(core.RoleAdmin, u.revokeToken))
	m.HandleFunc("GET /assets", u.page(core.RoleViewer, u.assetsPage))
	m.HandleFunc("GET /assets/graph", u.page(core.RoleViewer, u.assetGraphPage))
	m.HandleFunc("GET /assets/{asset_id}", u.page(core.RoleViewer, u.assetPage))
	m.HandleFunc("POST /assets/{asset_id}/materialize", u.form(core.RoleOp, u.materialize))
	u.stateRoutes(m, "/assets/{asset_id}/state", assetScope)
	m.HandleFunc("POST /assets/{asset_id}/watchers/{watcher}/reset", u.form(statestore.EditRole, u.resetCursor))
	m.HandleFunc("/", u.page(core.RoleViewer, func(w http.ResponseWriter, r *http.Request, req *request) {
		u.fail(w, r, req, http.StatusNotFound, "There is no page at "+r.URL.Path+".")
	}))
	u.mux = m
}
