package cli

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/tracing"
)

// startTracing builds the process's tracer when [traces] otlp_endpoint
// (or a standard OTEL_EXPORTER_OTLP_* variable) names a collector; without
// one, opts.traces stays nil: no tracing, no cost. The api-server records
// its tries' spans and a scheduler its runs' (docs/tracing.md), and
// withMetrics runs the tracer's flush at shutdown.
func startTracing(cfg *config.Config, opts *Options, logger *slog.Logger) error {
	endpoint := tracing.Endpoint(cfg.Traces.OTLPEndpoint, opts.Environ)
	if endpoint == "" || opts.traces != nil {
		return nil
	}
	if err := tracing.CheckEndpoint(endpoint); err != nil {
		return fmt.Errorf("[traces] otlp_endpoint (or %s): %w", tracing.EnvEndpoint, err)
	}
	tr, err := tracing.New(tracing.Config{Endpoint: endpoint, Version: buildVersion(), Logger: logger, Environ: opts.Environ})
	if err != nil {
		return err
	}
	logger.Info("exporting traces", "otlp_endpoint", endpoint)
	opts.traces = tr
	return nil
}

// tryTracer is the Execution API's tracer of tries: nil (no tracing)
// unless startTracing made one.
func tryTracer(opts *Options) execapi.TryTracer {
	if opts.traces == nil {
		return nil
	}
	return opts.traces
}

// failoverTracer is the scheduler's hook that sends the spans of a try it
// failed over; nil without a tracer.
func failoverTracer(opts *Options) func(*core.TaskInstance, core.TIState, *time.Time, time.Time) {
	if opts.traces == nil {
		return nil
	}
	return opts.traces.TryFailedOver
}

// runTracer is the scheduler's hook that sends a run's span as it ends;
// nil without a tracer.
func runTracer(opts *Options) func(*core.DagRun, core.DagRunState, time.Time) {
	if opts.traces == nil {
		return nil
	}
	return opts.traces.RunFinished
}
