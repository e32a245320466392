package cli

import (
	"fmt"
	"log/slog"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/tracing"
)

// tryTracer returns the api-server's tracer of tries when [traces]
// otlp_endpoint (or a standard OTEL_EXPORTER_OTLP_* variable) names a
// collector, and nil (no tracing, no cost) otherwise. The process keeps it
// in opts, and withMetrics runs its flush at shutdown.
func tryTracer(cfg *config.Config, opts *Options, logger *slog.Logger) (execapi.TryTracer, error) {
	if opts.traces == nil {
		endpoint := tracing.Endpoint(cfg.Traces.OTLPEndpoint, opts.Environ)
		if endpoint == "" {
			return nil, nil
		}
		if err := tracing.CheckEndpoint(endpoint); err != nil {
			return nil, fmt.Errorf("[traces] otlp_endpoint (or %s): %w", tracing.EnvEndpoint, err)
		}
		tr, err := tracing.New(tracing.Config{Endpoint: endpoint, Role: "api-server", Version: version, Logger: logger})
		if err != nil {
			return nil, err
		}
		logger.Info("exporting task traces", "otlp_endpoint", endpoint)
		opts.traces = tr
	}
	return opts.traces, nil
}
