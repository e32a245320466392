package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// MaxHTTPBody bounds the response body an http task or trigger reads.
const MaxHTTPBody = 10 << 20

// runHTTP sends one request (Airflow's HttpOperator). Args: http_conn_id
// (base URL, with optional user:password for basic auth), endpoint (joined
// to the base URL; an absolute URL when there is no connection), method
// (default POST, as Airflow), data (a string is sent as is, anything else as
// JSON), headers. A non-2xx answer fails the try; a JSON response body is
// the return value.
func (r *Runner) runHTTP(ctx context.Context, req *Request) (*Result, error) {
	connID, err := stringArg(req.Args, "http_conn_id", false)
	if err != nil {
		return nil, err
	}
	endpoint, err := stringArg(req.Args, "endpoint", false)
	if err != nil {
		return nil, err
	}
	method, err := stringArg(req.Args, "method", false)
	if err != nil {
		return nil, err
	}
	if method == "" {
		method = http.MethodPost
	}
	headers, err := stringMapArg(req.Args, "headers")
	if err != nil {
		return nil, err
	}
	target, err := r.httpTarget(ctx, req, connID, endpoint)
	if err != nil {
		return nil, err
	}
	body, contentType, err := httpBody(req.Args["data"])
	if err != nil {
		return nil, err
	}
	hreq, err := NewHTTPRequest(ctx, method, target, body, headers)
	if err != nil {
		return nil, err
	}
	if contentType != "" && hreq.Header.Get("Content-Type") == "" { // a header argument wins
		hreq.Header.Set("Content-Type", contentType)
	}
	client := r.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Minute}
	}
	req.logf("%s %s", hreq.Method, hreq.URL.Redacted())
	resp, err := client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("http request cancelled: %w", cancelled(ctx))
		}
		return nil, fmt.Errorf("http %s %s: %w", hreq.Method, hreq.URL.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := ReadHTTPBody(resp)
	if err != nil {
		return nil, err
	}
	req.logf("http response: %s, %d bytes", resp.Status, len(data))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("http %s %s answered %s: %s", hreq.Method, hreq.URL.Redacted(), resp.Status, truncate(string(data), 512))
	}
	if len(bytes.TrimSpace(data)) > 0 && json.Valid(data) {
		return &Result{ReturnValue: json.RawMessage(bytes.TrimSpace(data))}, nil
	}
	return &Result{}, nil
}

// httpTarget is where the request goes, masking the password of an
// endpoint URL or of the connection in the try's log.
func (r *Runner) httpTarget(ctx context.Context, req *Request, connID, endpoint string) (*url.URL, error) {
	if connID == "" {
		u, err := HTTPTarget(nil, "", endpoint)
		if err != nil {
			return nil, err
		}
		if pw, ok := u.User.Password(); ok {
			req.mask(pw)
		}
		return u, nil
	}
	base, err := r.connection(ctx, req, connID)
	if err != nil {
		return nil, err
	}
	return HTTPTarget(base, connID, endpoint)
}

// HTTPTarget is the URL of an http request: with no connection (base is
// nil), endpoint itself, which must be an absolute http(s) URL; else
// endpoint, a path relative to connection connID's http(s) URI base,
// joined to it (a query in endpoint replaces base's). Errors wrap
// core.ErrInvalid.
func HTTPTarget(base *url.URL, connID, endpoint string) (*url.URL, error) {
	if base == nil {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("without http_conn_id, endpoint must be an absolute http(s) URL, got %q: %w", endpoint, core.ErrInvalid)
		}
		return u, nil
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("connection %q must be an http(s) URI, got scheme %q: %w", connID, base.Scheme, core.ErrInvalid)
	}
	ep, err := url.Parse(endpoint)
	if err != nil || ep.IsAbs() || ep.Host != "" {
		return nil, fmt.Errorf("endpoint must be a path relative to connection %q, got %q: %w", connID, endpoint, core.ErrInvalid)
	}
	u := *base
	u.Path = strings.TrimRight(base.Path, "/") + "/" + strings.TrimLeft(ep.Path, "/")
	u.RawPath = ""
	if ep.RawQuery != "" {
		u.RawQuery = ep.RawQuery
	}
	return &u, nil
}

// NewHTTPRequest builds a request to target with headers; a user:password
// in target becomes basic auth and leaves the URL.
func NewHTTPRequest(ctx context.Context, method string, target *url.URL, body io.Reader, headers map[string]string) (*http.Request, error) {
	hreq, err := http.NewRequestWithContext(ctx, strings.ToUpper(method), target.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build http request: %w", err)
	}
	for k, v := range headers {
		hreq.Header.Set(k, v)
	}
	if target.User != nil {
		pw, _ := target.User.Password()
		hreq.SetBasicAuth(target.User.Username(), pw)
		hreq.URL.User = nil
	}
	return hreq, nil
}

// ReadHTTPBody reads resp's body, refusing one over MaxHTTPBody bytes
// (core.ErrTooLarge).
func ReadHTTPBody(resp *http.Response) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPBody+1))
	if err != nil {
		return nil, fmt.Errorf("read http response: %w", err)
	}
	if len(data) > MaxHTTPBody {
		return nil, fmt.Errorf("http response body exceeds %d bytes: %w", MaxHTTPBody, core.ErrTooLarge)
	}
	return data, nil
}

// httpBody encodes the data argument.
func httpBody(data any) (io.Reader, string, error) {
	switch v := data.(type) {
	case nil:
		return nil, "", nil
	case string:
		return strings.NewReader(v), "", nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, "", fmt.Errorf("argument \"data\" cannot be encoded as JSON: %w: %w", err, core.ErrInvalid)
		}
		return bytes.NewReader(b), "application/json", nil
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
