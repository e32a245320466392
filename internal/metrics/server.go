package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server serves /metrics on its own address ([metrics] listen), for
// processes without an api-server (scheduler, triggerer, worker).
type Server struct {
	Addr    string
	Metrics *Metrics
	Logger  *slog.Logger // nil = discard
}

// Start listens on Addr and serves GET /metrics until ctx ends; it returns
// an error naming the address when it cannot listen.
func (s *Server) Start(ctx context.Context) error {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("[metrics] listen %q: %w", s.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.Metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	log.InfoContext(ctx, "metrics listening", "addr", ln.Addr().String())
	select {
	case err := <-done:
		return fmt.Errorf("metrics serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics serve: %w", err)
	}
	return nil
}
