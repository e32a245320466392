// Package api serves Weir's public REST API under /api/v2, named as Apache
// Airflow's REST API v2 names its resources (dags, dagRuns, taskInstances,
// xcomEntries, importErrors, pools, connections, health, version).
//
// It is built with huma over net/http.ServeMux, so the OpenAPI 3.1 document
// is generated from the handlers' types and served at /api/v2/openapi.json.
// Requests authenticate with a bearer API token ("weir_...") or a signed
// session cookie obtained from POST /api/v2/auth/login; every error is an
// RFC 9457 problem+json document.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// Prefix is the path under which the public API is served.
const Prefix = "/api/v2"

// Config is what the public API needs. Store and SecretKey are required.
type Config struct {
	Store  store.Store
	Clock  core.Clock   // nil = core.SystemClock
	Logger *slog.Logger // nil = discard
	// SecretKey signs session cookies (HMAC-SHA256). Every api-server behind
	// one load balancer must share it.
	SecretKey []byte
	// PreviousSecretKeys are earlier session keys still accepted during a
	// rotation ([api_auth] secret_key's later keys); SecretKey alone signs.
	PreviousSecretKeys [][]byte
	// SessionTTL is how long a login lasts; 0 = 12 hours.
	SessionTTL time.Duration
	// SecureCookie sets the Secure attribute on the session cookie (serve
	// over HTTPS when true).
	SecureCookie bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-Proto
	// (https: a Secure cookie) and X-Forwarded-For (the client the login
	// throttle counts) are believed; nil = none.
	TrustedProxies auth.TrustedProxies
	// LogFolder is [logging] base_log_folder, where task logs are read
	// when Logs is nil.
	LogFolder string
	// Logs is where task logs are read ([logging] log_store); nil =
	// tasklog.Folder(LogFolder).
	Logs tasklog.Logs
	// DagsFolder is [core] dags_folder, where dagSources reads DAG files
	// ("" = no source is served).
	DagsFolder string
	// Version is reported by GET /api/v2/version.
	Version string
	// GitVersion is reported by GET /api/v2/version.
	GitVersion string
	// SchedulerHealthThreshold is how old the latest scheduler heartbeat may
	// be for the scheduler to count as healthy; 0 = 30 seconds.
	SchedulerHealthThreshold time.Duration
	// State serves task state; nil = statestore.New(Store, Clock, defaults).
	State *statestore.Service
	// Service carries out every change; nil = service.New over Store.
	Service *service.Service
	// LoginThrottle backs off repeated failed logins per user and per
	// address (429 with Retry-After); nil = auth.NewLoginThrottle with its
	// defaults over Clock. It lives in this process's memory.
	LoginThrottle *auth.LoginThrottle
	// LoginTokenTTL is how long a token from POST /api/v2/auth/token (weir
	// login) lasts; 0 = DefaultLoginTokenTTL.
	LoginTokenTTL time.Duration
}

// server holds the handlers' dependencies.
type server struct {
	cfg Config
	st  reader
	clk core.Clock
	log *slog.Logger
	api huma.API

	states   *statestore.Service
	svc      *service.Service
	sessions auth.Sessions
}

// NewHandler returns the http.Handler serving every /api/v2 route, including
// the OpenAPI document (/api/v2/openapi.json) and its docs page
// (/api/v2/docs). Mount it at "/api/v2/" (it expects the full path).
func NewHandler(cfg Config) (http.Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("api: Config.Store is required")
	}
	if len(cfg.SecretKey) < 16 {
		return nil, errors.New("api: Config.SecretKey must be at least 16 bytes (it signs session cookies)")
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Logs == nil {
		cfg.Logs = tasklog.Folder(cfg.LogFolder)
	}
	if cfg.SchedulerHealthThreshold == 0 {
		cfg.SchedulerHealthThreshold = 30 * time.Second
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Service == nil {
		cfg.Service = service.New(service.Config{Store: cfg.Store, Clock: cfg.Clock, Logger: cfg.Logger})
	}
	if cfg.LoginThrottle == nil {
		cfg.LoginThrottle = auth.NewLoginThrottle(auth.ThrottleConfig{}, cfg.Clock)
	}
	if cfg.State == nil {
		cfg.State = statestore.New(cfg.Store, cfg.Clock, statestore.Config{DefaultRetentionDays: statestore.DefaultRetentionDays,
			CheckCursor: service.WatcherCursorCheck(cfg.Store, cfg.Service.Triggers())})
	}
	s := &server{cfg: cfg, st: cfg.Store, clk: cfg.Clock, log: cfg.Logger, svc: cfg.Service, states: cfg.State,
		sessions: auth.Sessions{Key: cfg.SecretKey, VerifyKeys: cfg.PreviousSecretKeys, Clock: cfg.Clock}}

	hc := huma.DefaultConfig("Weir API", cfg.Version)
	hc.Info.Description = "Weir's public REST API, in the shape of Apache Airflow's REST API v2."
	hc.OpenAPIPath = Prefix + "/openapi"
	hc.DocsPath = "" // served by docsHandler: rendered here, no CDN (docs.go)
	hc.SchemasPath = Prefix + "/schemas"
	hc.CreateHooks = nil // no "$schema" link in bodies: responses keep Airflow's shape
	hc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		securityBearer:  {Type: "http", Scheme: "bearer", Description: "API token (weir_...)"},
		securitySession: {Type: "apiKey", In: "cookie", Name: SessionCookie, Description: "session from POST /api/v2/auth/login"},
	}
	mux := &routeMux{ServeMux: http.NewServeMux(), fallback: s.noRoute}
	s.api = humago.New(mux, hc)
	s.api.UseMiddleware(s.authenticate, s.strictQuery)

	s.registerMonitor()
	s.registerAuth()
	s.registerAuthToken()
	s.registerUsers()
	s.registerDags()
	s.registerDagRuns()
	s.registerBackfills()
	s.registerDagDelete()
	s.registerDagInfo()
	s.registerDagDefinition()
	s.registerDagSources()
	s.registerTaskInstances()
	s.registerTaskInstanceActions()
	s.registerBatchLists()
	s.registerLogs()
	s.registerCallbacks()
	s.registerXCom()
	s.registerTaskState()
	s.registerImportErrors()
	s.registerDagWarnings()
	s.registerTriggers()
	s.registerWatchers()
	s.registerStreams()
	s.registerPools()
	s.registerConnections()
	s.registerVariables()
	s.registerAssets()
	s.registerAssetAliases()
	s.registerAssetState()
	s.registerEventLogs()
	mux.HandleFunc("GET "+Prefix+"/docs", s.docsHandler())
	s.registerRevocation()
	mux.HandleFunc(Prefix+"/", s.noRoute)
	return mux, nil
}

// noRoute answers a path or method no operation serves with a problem+json 404.
func (s *server) noRoute(w http.ResponseWriter, r *http.Request) {
	hctx := humago.NewContext(&huma.Operation{}, r, w)
	_ = huma.WriteErr(s.api, hctx, http.StatusNotFound,
		fmt.Sprintf("no API route %s %s; the routes are listed in %s/openapi.json", r.Method, r.URL.Path, Prefix))
}

// register adds one operation, accessible to principals of at least role
// (core.RolePublic: no authentication).
func register[I, O any](s *server, role core.Role, op huma.Operation, h func(context.Context, *I) (*O, error)) {
	op.Metadata = map[string]any{metaRole: role}
	if role != core.RolePublic {
		op.Security = []map[string][]string{{securityBearer: {}}, {securitySession: {}}}
		op.Errors = append(op.Errors, http.StatusUnauthorized, http.StatusForbidden)
	}
	huma.Register(s.api, op, h)
}

// Page is the limit/offset/order_by triple every list endpoint accepts; the
// list pages in the database (store.Page).
type Page struct {
	Limit   int    `query:"limit" minimum:"1" default:"50" doc:"maximum number of entries to return (a larger limit returns 1000, as Airflow's maximum_page_limit cuts it)"`
	Offset  int    `query:"offset" minimum:"0" default:"0" doc:"number of entries to skip"`
	OrderBy string `query:"order_by" doc:"field to order by, \"-\" first for descending; the operation's description lists the fields and the default order"`
}

// MaxPageLimit is the most entries a page holds: a larger limit is cut to
// it (Airflow's [api] maximum_page_limit does the same; an Airflow client
// asks for more and pages on).
const MaxPageLimit = 1000

// store returns the page as the store takes it.
func (p Page) store() store.Page {
	return store.Page{Limit: min(p.Limit, MaxPageLimit), Offset: p.Offset, OrderBy: p.OrderBy}
}

// Cursor is the keyset position of the lists that grow fastest (asset
// events, event logs): with it the database starts at an id through its
// index instead of counting the rows an offset skips.
type Cursor struct {
	AfterID  int64 `query:"after_id" minimum:"0" doc:"keyset cursor: only entries whose id is greater; to page on in ascending id order, pass the last id of the previous page"`
	BeforeID int64 `query:"before_id" minimum:"0" doc:"keyset cursor: only entries whose id is smaller; to page on in descending id order, pass the last id of the previous page"`
}

// store returns the cursor as the store takes it.
func (c Cursor) store() store.Cursor { return store.Cursor{AfterID: c.AfterID, BeforeID: c.BeforeID} }

// listOf reads one page with list and total_entries with count, both with
// the same parameters p: the database returns only the page's rows and one
// count. A bad order_by or cursor is a 400 naming what is allowed.
func listOf[P, T any](ctx context.Context, s *server, p *P,
	list func(context.Context, *P) ([]T, error), count func(context.Context, *P) (int, error)) ([]T, int, error) {
	items, total, err := store.List(ctx, p, list, count)
	if err != nil {
		return nil, 0, s.problem(ctx, err)
	}
	return items, total, nil
}

// listDoc is a list operation's description: what it lists, then its
// order_by fields and default order.
func listDoc(what string, o store.Order) string { return what + " " + o.Doc() }

// optional is a query parameter that may be absent (IsSet false).
type optional[T any] struct {
	Value T
	IsSet bool
}

// Schema documents the parameter as its value type.
func (o optional[T]) Schema(r huma.Registry) *huma.Schema {
	return huma.SchemaFromType(r, reflect.TypeOf(o.Value))
}

// Receiver is where huma parses the parameter.
func (o *optional[T]) Receiver() reflect.Value { return reflect.ValueOf(o).Elem().Field(0) }

// OnParamSet records whether the request carried the parameter.
func (o *optional[T]) OnParamSet(isSet bool, _ any) { o.IsSet = isSet }
