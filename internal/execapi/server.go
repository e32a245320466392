// Package execapi is Weir's Execution API server: the worker-facing HTTP
// interface mounted at /execution (paths mirror Airflow's Task Execution
// API). Its client and the wire types both sides share are in package
// execclient, which workers and the in-task CLI use without importing this
// package or any store.
//
// Authentication: every route but /execution/health takes a bearer JWT from
// package auth. The claim and worker-heartbeat routes need a worker credential (scope "worker");
// every other route needs an execution token (scope "execution") whose
// subject is one try's task-instance id. A missing, invalid, expired or forged
// token is answered 401 (RFC 6750 "invalid_token"; Airflow answers 403 for an
// invalid one, Weir keeps 403 for "authenticated but not allowed"): a token
// of the wrong scope or for another task instance gets 403, and a token for a
// try that is not running is refused (tryGate, the one place that checks a
// token's try): 409 on the lifecycle routes (run, state, heartbeat), 403 on
// every route of the try's data, and nothing changes.
//
// When the execution token of a running try is near expiry the server
// returns a fresh one in the Refreshed-API-Token response header
// (execclient.RefreshedTokenHeader); a try that is not running never gets one.
package execapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// Config tunes the server; zero fields take the defaults below.
type Config struct {
	MaxClaimBatch int           // most workloads one claim returns; default 32
	MaxClaimWait  time.Duration // longest long-poll; default 60 s
	MaxXComBytes  int64         // largest XCom value; default 1 MiB
	MaxLogChunk   int64         // largest log chunk per request; default 1 MiB
	// AllowAnyConnection lets a running try read any connection, as
	// in Airflow; false (the default) allows only those its task declares.
	AllowAnyConnection bool
	// OnlyDagRunID, when not 0, confines every claim the server answers
	// (tries, callbacks) to that run: `weir dags test`'s private server
	// hands its worker no work of the deployment it shares a database
	// with.
	OnlyDagRunID int64
	// ClaimRecheck is how often a long-polling claim looks again with no
	// notification (0 = never): on SQLite a notification wakes only its own
	// process, so work queued by another process sharing the file (another
	// `weir dags test`, a standalone) would wait out the poll.
	ClaimRecheck time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxClaimBatch <= 0 {
		c.MaxClaimBatch = 32
	}
	if c.MaxClaimWait <= 0 {
		c.MaxClaimWait = time.Minute
	}
	if c.MaxXComBytes <= 0 {
		c.MaxXComBytes = 1 << 20
	}
	if c.MaxLogChunk <= 0 {
		c.MaxLogChunk = 1 << 20
	}
	return c
}

// Deps are the server's collaborators.
type Deps struct {
	Store     store.Store
	Tokens    *auth.Tokens
	Clock     core.Clock // nil = core.SystemClock
	LogFolder string     // base folder of task logs (package tasklog layout), used when Logs is nil
	// Logs is where shipped task logs are kept ([logging] log_store); nil
	// = tasklog.Folder(LogFolder), or none when LogFolder is "" too.
	Logs   tasklog.Logs
	Logger *slog.Logger // nil = discard
	Config Config
	// State serves task and asset state; nil = statestore.New(Store, Clock, defaults).
	State *statestore.Service
	// Service carries out changes (finishing a try); nil = service.New
	// over Store with State's clear_on_success.
	Service *service.Service
	// Revocations refuses revoked worker credentials; nil = a cache over
	// Store's revocations with auth.DefaultRevocationTTL.
	Revocations *auth.Revocations
	// OnTryFinished, when set, is told of each try a worker reports
	// finished: the reported state and how long it ran (metrics).
	OnTryFinished func(state core.TIState, ran time.Duration)
	// Traces, when set, records each try a worker reports finished or
	// deferred as spans (internal/tracing); nil = no tracing, no cost.
	Traces TryTracer
}

type server struct {
	st     storePort
	tokens *auth.Tokens
	clock  core.Clock
	logs   tasklog.Logs // nil = no log store
	log    *slog.Logger
	cfg    Config
	states *statestore.Service
	svc    *service.Service

	versions store.VersionCache
	revoked  *auth.Revocations
	handed   handedOut
	finished func(core.TIState, time.Duration)
	traces   TryTracer // nil = off
}

// smallBody bounds JSON bodies other than XCom values and log chunks.
const smallBody = 64 << 10

// deferralBody bounds a state report, which may carry a deferral's trigger
// kwargs and next_kwargs (each at most 64 KiB; the service checks) or the
// end of the try's log (at most execclient.MaxReportedLogTail, 64 KiB:
// 86 KiB in base64).
const deferralBody = 3 * smallBody

// NewHandler returns the Execution API. Its patterns include the /execution
// prefix, so mount it as mux.Handle("/execution/", h).
func NewHandler(d Deps) http.Handler {
	s := &server{st: d.Store, tokens: d.Tokens, clock: d.Clock, logs: d.Logs, log: d.Logger, cfg: d.Config.withDefaults()}
	if s.logs == nil && d.LogFolder != "" {
		s.logs = tasklog.Folder(d.LogFolder)
	}
	if s.clock == nil {
		s.clock = core.SystemClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.revoked = d.Revocations
	s.finished = d.OnTryFinished
	s.traces = d.Traces
	if s.revoked == nil {
		s.revoked = auth.NewRevocations(storeRevocations(d.Store), 0, s.clock)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /execution/health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, execclient.Health{Status: "healthy"})
	})
	mux.HandleFunc("POST /execution/workloads/claim", s.worker(s.claim))
	mux.HandleFunc("POST /execution/workers/heartbeat", s.worker(s.workerHeartbeat))
	mux.HandleFunc("PATCH /execution/task-instances/{id}/run", s.starting(s.run))
	mux.HandleFunc("PATCH /execution/task-instances/{id}/state", s.ending(s.state))
	mux.HandleFunc("PUT /execution/task-instances/{id}/heartbeat", s.lifecycle(s.heartbeat))
	mux.HandleFunc("POST /execution/task-instances/{id}/token", s.worker(s.renewToken))
	mux.HandleFunc("POST /execution/task-instances/{id}/logs", s.logging(s.appendLog))
	xcom := "/execution/xcoms/{dag_id}/{run_id}/{task_id}/{key}"
	mux.HandleFunc("GET "+xcom, s.execution(s.xcomGet))
	mux.HandleFunc("POST "+xcom, s.execution(s.xcomSet))
	mux.HandleFunc("DELETE "+xcom, s.execution(s.xcomDelete))
	mux.HandleFunc("GET /execution/connections/{conn_id}", s.execution(s.connectionGet))
	mux.HandleFunc("GET /execution/variables/{key}", s.execution(s.variableGet))
	s.registerState(mux, d.State, d.Store)
	mux.HandleFunc("GET /execution/task-instances/{id}/assets", s.execution(s.taskAssets))
	mux.HandleFunc("GET /execution/task-instances/{id}/previous-successful-dagrun", s.execution(s.previousSuccessfulRun))
	mux.HandleFunc("GET /execution/task-instances/{id}/triggering-asset-events", s.execution(s.triggeringEvents))
	s.svc = d.Service
	if s.svc == nil {
		s.svc = service.New(service.Config{Store: d.Store, Clock: s.clock, Logger: s.log,
			ClearTaskStateOnSuccess: s.states.Config().ClearOnSuccess})
	}
	s.registerAliases(mux)
	s.registerCallbacks(mux)
	mux.HandleFunc("POST /execution/task-instances/{id}/asset-events", s.execution(s.assetEventEmit))
	mux.HandleFunc("GET /execution/task-instances/{id}/stream", s.execution(s.streamGet))
	mux.HandleFunc("POST /execution/task-instances/{id}/stream", s.execution(s.streamPush))
	mux.HandleFunc("GET /execution/task-instances/{id}/stream/events", s.execution(s.handlerEvents))
	mux.HandleFunc("POST /execution/task-instances/{id}/stream/handled", s.execution(s.streamHandled))
	mux.HandleFunc("/execution/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, s.log, withStatus(http.StatusNotFound, "", fmt.Errorf("no Execution API route %s %s", r.Method, r.URL.Path)))
	})
	return s.versioned(mux)
}

type authedHandler func(w http.ResponseWriter, r *http.Request, c *auth.Claims) error

// worker wraps a handler that needs a worker credential.
func (s *server) worker(h authedHandler) http.HandlerFunc {
	return s.authed(auth.ScopeWorker, h)
}

// execution wraps a handler of a try's data: an execution token whose try
// is running (tryGate), reissued in the Refreshed-API-Token header when it
// is near expiry.
func (s *server) execution(h authedHandler) http.HandlerFunc {
	return s.tryGate(needRunning, h)
}

// authed wraps a handler that needs a token of scope and nothing more.
func (s *server) authed(scope string, h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.authenticate(r, scope)
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

func (s *server) authenticate(r *http.Request, scope string) (*auth.Claims, error) {
	return s.authenticateHeader(r, "Authorization", scope)
}

// bearer returns the bearer token in header.
func bearer(r *http.Request, header string) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get(header), "Bearer ")
	return tok, ok && tok != ""
}

// authenticateHeader checks the bearer token in header, of scope.
func (s *server) authenticateHeader(r *http.Request, header, scope string) (*auth.Claims, error) {
	tok, ok := bearer(r, header)
	if !ok {
		return nil, fmt.Errorf("missing bearer token in the %s header: %w", header, core.ErrUnauthorized)
	}
	c, err := s.tokens.Validate(tok)
	if err != nil {
		return nil, err
	}
	if c.Scope != scope {
		return nil, fmt.Errorf("this route needs a token of scope %q, got %q: %w", scope, c.Scope, core.ErrForbidden)
	}
	if c.Scope == auth.ScopeWorker {
		if err := s.revoked.Check(r.Context(), c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// ownTI checks that the token was issued for the path's task instance.
func ownTI(r *http.Request, c *auth.Claims) error {
	if id := r.PathValue("id"); id != c.Subject {
		return fmt.Errorf("token subject does not match task instance %s: %w", id, core.ErrForbidden)
	}
	return nil
}
