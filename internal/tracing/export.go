package tracing

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weirflow/weir/internal/netfail"
)

// The standard OpenTelemetry variables the exporter reads besides the
// endpoint; the OTEL_EXPORTER_OTLP_TRACES_* form of each wins over the
// OTEL_EXPORTER_OTLP_* one.
const (
	envHeaders     = "HEADERS"            // key=value,… (values URL-encoded): sent with every export
	envTimeout     = "TIMEOUT"            // milliseconds one export may take, retries included; default 10000
	envCompression = "COMPRESSION"        // gzip or none (default)
	envCertificate = "CERTIFICATE"        // PEM file of the CAs to trust instead of the system's
	envClientCert  = "CLIENT_CERTIFICATE" // PEM file of a client certificate (mutual TLS)…
	envClientKey   = "CLIENT_KEY"         // …and its key
)

// exporter sends spans to an OTLP/HTTP traces endpoint as protobuf
// (the ExportTraceServiceRequest of opentelemetry-proto), retrying what
// the specification says to retry (429, 502, 503, 504, and a failed
// connection) with growing waits, or the server's Retry-After, within the
// export's time.
type exporter struct {
	url     string
	client  *http.Client
	headers http.Header
	gzip    bool
	timeout time.Duration
}

// newExporter returns an exporter to endpoint configured from environ's
// OTEL_EXPORTER_OTLP_* variables; a variable it cannot read is an error
// naming it.
func newExporter(endpoint string, environ []string) (*exporter, error) {
	env := otlpEnv(environ)
	e := &exporter{url: endpoint, headers: http.Header{}, timeout: 10 * time.Second}
	e.headers.Set("Content-Type", "application/x-protobuf")
	e.headers.Set("User-Agent", "weir")
	if v, name, ok := env(envHeaders); ok {
		for _, pair := range strings.Split(v, ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			k, val, found := strings.Cut(pair, "=")
			key := strings.TrimSpace(k)
			dec, err := url.PathUnescape(strings.TrimSpace(val))
			if !found || key == "" || err != nil {
				return nil, fmt.Errorf("%s: %q is not key=value (a value URL-encoded)", name, pair)
			}
			e.headers.Set(key, dec)
		}
	}
	if v, name, ok := env(envTimeout); ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive number of milliseconds", name, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	if v, name, ok := env(envCompression); ok {
		switch strings.TrimSpace(v) {
		case "gzip":
			e.gzip = true
		case "none", "":
		default:
			return nil, fmt.Errorf("%s: %q is neither gzip nor none", name, v)
		}
	}
	tlsConf, err := tlsConfig(env)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	e.client = &http.Client{Transport: tr}
	return e, nil
}

// otlpEnv returns a lookup of the exporter's variables in environ: the
// value, the name it was found under, and whether it was set.
func otlpEnv(environ []string) func(suffix string) (string, string, bool) {
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "OTEL_EXPORTER_OTLP_") {
			vars[k] = v
		}
	}
	return func(suffix string) (string, string, bool) {
		for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + suffix, "OTEL_EXPORTER_OTLP_" + suffix} {
			if v, ok := vars[name]; ok {
				return v, name, true
			}
		}
		return "", "", false
	}
}

// tlsConfig is the exporter's TLS configuration from the certificate
// variables; nil when none is set (the system's roots).
func tlsConfig(env func(string) (string, string, bool)) (*tls.Config, error) {
	caFile, caName, hasCA := env(envCertificate)
	certFile, certName, hasCert := env(envClientCert)
	keyFile, keyName, hasKey := env(envClientKey)
	if !hasCA && !hasCert && !hasKey {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if hasCA {
		pem, err := os.ReadFile(caFile) //nolint:gosec // the operator names the file
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caName, err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caName, caFile)
		}
	}
	if hasCert != hasKey {
		return nil, fmt.Errorf("%s and %s must be set together", cmp.Or(certName, "OTEL_EXPORTER_OTLP_"+envClientCert),
			cmp.Or(keyName, "OTEL_EXPORTER_OTLP_"+envClientKey))
	}
	if hasCert {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// ExportSpans sends spans in one request, retried until it succeeds, the
// server refuses it for good, or the export's time (the exporter's
// timeout, or ctx's deadline when sooner) is spent.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body := encodeRequest(spans)
	encoding := ""
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body, encoding = buf.Bytes(), "gzip"
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	wait := 500 * time.Millisecond
	for {
		retryAfter, err := e.post(ctx, body, encoding)
		if err == nil {
			return nil
		}
		if retryAfter < 0 {
			return fmt.Errorf("export %d spans to %s: %w", len(spans), e.url, err)
		}
		if retryAfter == 0 {
			retryAfter = wait
			wait = min(2*wait, 5*time.Second)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < retryAfter {
			return fmt.Errorf("export %d spans to %s: %w (no time left to try again in %v)", len(spans), e.url, err, retryAfter)
		}
		if !netfail.Wait(ctx, retryAfter) {
			return fmt.Errorf("export %d spans to %s: %w (then %w)", len(spans), e.url, err, ctx.Err())
		}
	}
}

// post sends one request. It returns nil, or the error with -1 when it is
// final, or with how long to wait before trying again (0: the exporter's
// own wait).
func (e *exporter) post(ctx context.Context, body []byte, encoding string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range e.headers {
		req.Header[k] = v
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil || !netfail.Transient(err) {
			return -1, err
		}
		return 0, err // no connection, or it broke: the collector may be restarting
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		if rejected, why := partialSuccess(msg); rejected > 0 {
			return -1, fmt.Errorf("the collector rejected %d of the spans: %s", rejected, why)
		}
		return 0, nil
	}
	err = fmt.Errorf("%s: %s", resp.Status, refusal(resp.Header.Get("Content-Type"), msg))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return 0, err
	}
	return -1, err
}

// refusal is what a collector's refusal says: the message of a protobuf
// google.rpc.Status (field 2), or the body's text.
func refusal(contentType string, body []byte) string {
	if strings.HasPrefix(contentType, "application/x-protobuf") {
		for _, f := range fields(body) {
			if f.tag == 2<<3|wireLen {
				return string(f.val)
			}
		}
		return fmt.Sprintf("(%d bytes of protobuf without a message)", len(body))
	}
	return strings.TrimSpace(string(body))
}

// Shutdown closes the exporter's idle connections.
func (e *exporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// partialSuccess reads an ExportTraceServiceResponse's partial_success
// (field 1: rejected_spans 1, error_message 2); a body that is not one
// reads as none.
func partialSuccess(body []byte) (rejected int64, message string) {
	for _, f := range fields(body) {
		if f.tag != 1<<3|wireLen {
			continue
		}
		for _, g := range fields(f.val) {
			switch g.tag {
			case 1<<3 | wireVarint:
				rejected = int64(g.num) //nolint:gosec // protobuf's int64 is two's complement
			case 2<<3 | wireLen:
				message = string(g.val)
			}
		}
		break
	}
	return rejected, message
}

// field is one field of a protobuf message: its tag, and its value as a
// number (varint, fixed) or bytes (length-delimited).
type field struct {
	tag, num uint64
	val      []byte
}

// fields splits msg into its fields, up to the first it cannot read.
func fields(msg []byte) []field {
	var out []field
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 {
			return out
		}
		msg = msg[n:]
		f := field{tag: tag}
		switch tag & 7 {
		case wireVarint:
			if f.num, n = binary.Uvarint(msg); n <= 0 {
				return out
			}
			msg = msg[n:]
		case wireI64, wireI32:
			size := 8
			if tag&7 == wireI32 {
				size = 4
			}
			if len(msg) < size {
				return out
			}
			f.val, msg = msg[:size], msg[size:]
		case wireLen:
			l, n := binary.Uvarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) { //nolint:gosec // len-n >= 0
				return out
			}
			f.val, msg = msg[n:n+int(l)], msg[n+int(l):] //nolint:gosec // l <= len(msg)-n
		default:
			return out
		}
		out = append(out, f)
	}
	return out
}
