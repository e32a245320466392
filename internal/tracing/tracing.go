// Package tracing exports OpenTelemetry traces of DAG runs and task tries
// over OTLP (HTTP/protobuf, export.go and wire.go): a run's span, and each try's life — queued,
// running, deferred, finished, retried — as spans built from the times the
// database recorded, with
// trace and span ids derived from the run and the try, so that spans made
// by different processes (and machines) join one trace per DAG run
// (docs/adr/0025-traces-from-recorded-times.md). A nil *Tracer records
// nothing: with no endpoint configured, tracing costs nothing.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The standard OpenTelemetry variables Endpoint reads when [traces]
// otlp_endpoint is empty.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"        // base URL; /v1/traces is appended
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" // the traces URL itself
)

// Endpoint returns the OTLP/HTTP traces URL to export to: configured
// ([traces] otlp_endpoint) when set, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// else OTEL_EXPORTER_OTLP_ENDPOINT followed by /v1/traces, from environ;
// "" = no tracing.
func Endpoint(configured string, environ []string) string {
	if configured != "" {
		return configured
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	if u := env[EnvTracesEndpoint]; u != "" {
		return u
	}
	if u := env[EnvEndpoint]; u != "" {
		return strings.TrimRight(u, "/") + "/v1/traces"
	}
	return ""
}

// CheckEndpoint returns an error naming what is wrong with an OTLP/HTTP
// endpoint URL: it must be an absolute http or https URL.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL such as http://collector:4318/v1/traces", endpoint)
	}
	return nil
}

// Config says where and as what a process exports its traces.
type Config struct {
	// Endpoint is the OTLP/HTTP traces URL (Endpoint's answer); "" = New
	// returns nil.
	Endpoint string
	// Version is Weir's version (service.version).
	Version string
	// BatchTimeout is how long spans wait to be sent together; 0 = 2 s.
	BatchTimeout time.Duration
	Logger       *slog.Logger
	// Environ holds the OTEL_EXPORTER_OTLP_* variables the exporter reads
	// (headers, timeout, compression, certificates); nil = os.Environ().
	Environ []string
}

// Tracer builds and exports the spans of tries. Its methods are safe for
// concurrent use; a nil *Tracer does nothing.
type Tracer struct {
	tp  *sdktrace.TracerProvider
	tr  trace.Tracer
	log *slog.Logger
}

// New returns a Tracer exporting to cfg.Endpoint, or nil when it is empty.
// Nothing is sent before the first span; an unreachable collector costs
// dropped spans (logged by the exporter), never a failed task.
func New(cfg Config) (*Tracer, error) {
	if cfg.Endpoint == "" {
		return nil, nil
	}
	if err := CheckEndpoint(cfg.Endpoint); err != nil {
		return nil, fmt.Errorf("[traces] otlp_endpoint: %w", err)
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ()
	}
	exp, err := newExporter(cfg.Endpoint, cfg.Environ)
	if err != nil {
		return nil, fmt.Errorf("[traces] otlp_endpoint %s: %w", cfg.Endpoint, err)
	}
	if cfg.BatchTimeout <= 0 {
		cfg.BatchTimeout = 2 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "weir"), attribute.String("service.version", cfg.Version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithIDGenerator(derivedIDs{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(cfg.BatchTimeout)))
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/weirflow/weir/internal/tracing"), log: log}, nil
}

// Start waits until ctx ends, then sends the spans not yet sent (within
// 5 s) and stops the exporter: a role's runner.
func (t *Tracer) Start(ctx context.Context) error {
	if t == nil {
		<-ctx.Done()
		return nil
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.log.Warn("send the last traces", "err", err)
	}
	return nil
}

// Flush sends the spans not yet sent.
func (t *Tracer) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}
