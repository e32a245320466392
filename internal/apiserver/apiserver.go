// Package apiserver runs the api-server role: one HTTP server that mounts the
// public REST API (/api/v2/), the Execution API for workers (/execution/)
// and the web UI (/, see package ui). It records a
// job heartbeat (role "api-server") so operators can see it is alive.
package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/metrics"
)

// Role is the job role the server heartbeats as.
const Role = "api-server"

// Server is the api-server role. Fill the fields, then call Start.
type Server struct {
	// Addr is the TCP address to listen on ("127.0.0.1:8080"; port 0 picks a
	// free port, see Listen and URL).
	Addr string
	// Store receives the job heartbeats; nil disables them.
	Store job.Store
	// Clock stamps heartbeats; nil = core.SystemClock.
	Clock core.Clock
	// Logger receives the server's logs; nil = discard.
	Logger *slog.Logger
	// API serves /api/v2/ (see api.NewHandler); nil leaves the REST API and
	// the UI unmounted (a server for the process's own worker, `dags test`).
	// API or Exec is required.
	API http.Handler
	// Exec serves /execution/ with the full path (see execapi); nil leaves
	// the Execution API unmounted.
	Exec http.Handler
	// UI serves every other path (see package ui); nil redirects / to the
	// health endpoint instead.
	UI http.Handler
	// HeartbeatInterval is how often the job heartbeat is written; 0 = 10s.
	HeartbeatInterval time.Duration
	// JobID is the id of its job row; "" = a new UUID. `weir dags test`
	// names it first: its run records it (core.DagRun.TestJobID).
	JobID string
	// Version is the Weir version written into the job row.
	Version string
	// ShutdownTimeout bounds the graceful shutdown; 0 = 10s.
	ShutdownTimeout time.Duration
	// Metrics serves GET /metrics and times every request; nil = neither.
	Metrics *metrics.Metrics
	// TLSCertFile and TLSKeyFile ([api] tls_cert_file, tls_key_file), both
	// set, make the server speak HTTPS only; both empty, plain HTTP.
	TLSCertFile, TLSKeyFile string

	mu  sync.Mutex
	ln  net.Listener
	tls *tls.Config // loaded by Listen when TLSCertFile is set

	inProcessOnce sync.Once
	inProcess     http.RoundTripper
}

// Listen binds Addr without serving yet, so a caller (or test) can learn the
// bound address before Start. Start calls it when it has not been called.
func (s *Server) Listen() (net.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return s.ln.Addr(), nil
	}
	if s.TLSCertFile != "" || s.TLSKeyFile != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCertFile, s.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("api-server: load [api] tls_cert_file %q and tls_key_file %q: %w", s.TLSCertFile, s.TLSKeyFile, err)
		}
		s.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("api-server listen on %q: %w", s.Addr, err)
	}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.ln = ln
	return ln.Addr(), nil
}

// URL returns "http://<bound address>" ("https://" with TLS), or "" before
// Listen.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	if s.tls != nil {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// Handler returns the server's routes: /api/v2/, /execution/ and the UI at /.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	if s.Metrics != nil {
		mux.Handle("GET /metrics", s.Metrics.Handler())
	}
	if s.Exec != nil {
		mux.Handle("/execution/", s.Exec)
	}
	if s.API == nil {
		return mux
	}
	// A browser's cross-origin request that changes something is refused
	// (403) before it is authenticated: a login cookie is SameSite=Strict,
	// which a sibling site (another port of this host, a subdomain) still
	// sends. Requests without the browser's Sec-Fetch-Site and Origin
	// headers (the CLI, scripts with tokens) pass.
	rest := http.NewCrossOriginProtection().Handler(s.API)
	mux.Handle("/api/v2/", rest)
	mux.Handle("POST "+api.AirflowTokenPath, rest) // Airflow 3's clients ask for their token here
	if s.UI != nil {
		mux.Handle("/", s.UI)
		return mux
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/v2/health", http.StatusFound)
	})
	return mux
}

// Start serves until ctx is done, then shuts down gracefully (in-flight
// requests finish within ShutdownTimeout) and returns nil; it returns an
// error when the server cannot listen or serve.
func (s *Server) Start(ctx context.Context) error {
	if s.API == nil && s.Exec == nil {
		return errors.New("api-server: Server.API or Server.Exec is required")
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addr, err := s.Listen()
	if err != nil {
		return err
	}
	drain := make(chan struct{})
	srv := &http.Server{
		Handler:           s.Metrics.InstrumentHTTP(s.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return execapi.WithDrain(context.WithoutCancel(ctx), drain) },
	}
	srv.RegisterOnShutdown(func() { close(drain) }) // long-poll claims answer at once
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(s.ln) }()
	log.InfoContext(ctx, "api-server listening", "url", s.URL(), "addr", addr.String(), "tls", s.tls != nil)

	hbDone := make(chan struct{})
	hbCtx, stopHB := context.WithCancel(ctx)
	go func() {
		defer close(hbDone)
		if s.Store != nil {
			_ = (&job.Heartbeat{ID: s.JobID, Store: s.Store, Role: Role, Clock: s.Clock, Interval: s.HeartbeatInterval, Logger: log, Version: s.Version}).Start(hbCtx)
		}
	}()
	defer func() { stopHB(); <-hbDone }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("api-server serve: %w", err)
	case <-ctx.Done():
	}
	timeout := s.ShutdownTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("api-server shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api-server serve: %w", err)
	}
	log.InfoContext(ctx, "api-server stopped")
	return nil
}
