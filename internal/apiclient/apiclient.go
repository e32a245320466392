// Package apiclient is a small client of Weir's public REST API (/api/v2)
// for the CLI's remote mode: it sends a bearer API token, encodes and
// decodes JSON, and turns every failure into an error in the user's terms —
// an unreachable API, an expired or unknown token (log in again), a role
// without the permission, or the problem+json detail the API answered with,
// wrapping the core sentinel of its status (core.ErrNotFound for a 404, ...).
//
// It imports no store or server package (only execclient's CA loading),
// so it can be linked into any program that talks to a Weir deployment.
package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// Prefix is the path of the public API under the deployment's URL.
const Prefix = "/api/v2"

// Client calls one deployment's REST API as one principal.
type Client struct {
	base  string // the deployment's URL, without a trailing slash or /api/v2
	token string
	http  *http.Client
}

// New returns a client of the deployment at baseURL (see NormalizeURL)
// that authenticates with token ("" for public routes only). hc nil uses a
// client with a 60 s timeout.
func New(baseURL, token string, hc *http.Client) (*Client, error) {
	base, err := NormalizeURL(baseURL)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{base: base, token: token, http: hc}, nil
}

// HTTPClient is a client with a 60 s timeout that verifies https
// api-servers against the system roots and, when caFile is not "", the CA
// certificates of that PEM file (a private CA). An unreadable file, or one
// without a certificate, is an error naming it.
func HTTPClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return &http.Client{Timeout: 60 * time.Second}, nil
	}
	roots, err := execclient.LoadCA(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA file for the Weir API: %w", err)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &http.Client{Timeout: 60 * time.Second, Transport: t}, nil
}

// NormalizeURL checks a deployment's URL (http or https, with a host) and
// returns it without a trailing slash or /api/v2 suffix, so that
// "http://h:8080/", "http://h:8080/api/v2" and "http://h:8080" are one
// deployment.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("API URL %q: want http://HOST[:PORT] or https://HOST[:PORT], the address of the api-server: %w", raw, core.ErrInvalid)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("API URL %q: give only the scheme, host, port and path, no user, query or fragment: %w", raw, core.ErrInvalid)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), Prefix)
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u.String(), nil
}

// URL is the deployment's normalized URL.
func (c *Client) URL() string { return c.base }

// Get calls GET path (under /api/v2) with query and decodes the JSON answer
// into out.
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, path, query, nil, out)
}

// Do calls method path (under /api/v2, e.g. "/dags") with query, sends in
// as JSON when not nil and decodes a JSON answer into out when not nil. Any
// status of 300 or more is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	b, _, err := c.send(ctx, method, path, query, in, "application/json")
	if err != nil || out == nil || len(b) == 0 {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the answer of %s %s from %s is not what this weir expects (%w): is it a Weir api-server of the same version?",
			method, path, c.base, err)
	}
	return nil
}

// GetText calls GET path with query asking for text/plain, and returns
// the body as it came and the answer's headers.
func (c *Client) GetText(ctx context.Context, path string, query url.Values) ([]byte, http.Header, error) {
	return c.send(ctx, http.MethodGet, path, query, nil, "text/plain")
}

// send calls method path with query and in (JSON, when not nil), asking
// for accept, and returns the answer's body and headers; a status of 300
// or more is an *Error.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, in any, accept string) ([]byte, http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	target := c.base + Prefix + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", accept)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, unreachableError(fmt.Sprintf("cannot reach the Weir API at %s (%s): is the api-server running and the URL right? "+
			"`weir login --status` checks the login", c.base, reason(err)))
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("read the answer of %s %s from %s: %w", method, path, c.base, err)
	}
	if resp.StatusCode >= 300 {
		return nil, nil, c.statusError(resp.StatusCode, b)
	}
	return b, resp.Header, nil
}

// reason is the innermost cause of a transport error ("connection
// refused"), without the URL the caller already names.
func reason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
