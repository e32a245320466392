package httptrigger

import (
	"context"
	"net/url"

	"golang.org/x/net/http/httpguts"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// Target is where a trigger sends its HTTP requests: an absolute URL, or
// an endpoint of an http connection, with headers. The http trigger and
// the http_json watcher share it.
type Target struct {
	URL, ConnID, Endpoint string
	Headers               map[string]string
}

// ParseTarget checks the url, or http_conn_id with endpoint, and headers
// kwargs (nil = not given), naming the kwarg at fault.
func ParseTarget(rawURL, connID, endpoint *string, headers map[string]string) (Target, error) {
	t := Target{Headers: headers}
	for name, v := range headers {
		if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(v) {
			return t, trigger.Invalid("headers", "holds %q, which is not a valid header name and value", name)
		}
	}
	switch {
	case rawURL != nil && (connID != nil || endpoint != nil):
		return t, trigger.Invalid("url", "cannot be given with http_conn_id or endpoint (use one or the other)")
	case rawURL != nil:
		if _, err := operator.HTTPTarget(nil, "", *rawURL); err != nil {
			return t, trigger.Invalid("url", "must be an absolute http(s) URL, got %q", *rawURL)
		}
		t.URL = *rawURL
	case connID == nil || *connID == "":
		if endpoint != nil {
			return t, trigger.Invalid("http_conn_id", "is required with endpoint (or give an absolute url instead)")
		}
		return t, trigger.Invalid("url", "is required (or http_conn_id with an endpoint)")
	default:
		t.ConnID = *connID
		if endpoint != nil {
			t.Endpoint = *endpoint
		}
		// The endpoint's shape is checked against a stand-in base: the
		// connection itself is looked up only when the trigger runs.
		if _, err := operator.HTTPTarget(&url.URL{Scheme: "http", Host: "conn"}, t.ConnID, t.Endpoint); err != nil {
			return t, trigger.Invalid("endpoint", "must be a path relative to the connection's URL, got %q", t.Endpoint)
		}
	}
	return t, nil
}

// Resolve is the request's URL: the url, or the endpoint joined to the
// connection's.
func (t Target) Resolve(ctx context.Context, rt *trigger.Runtime) (*url.URL, error) {
	if t.ConnID == "" {
		return url.Parse(t.URL) // checked by ParseTarget
	}
	base, err := rt.Connection(ctx, t.ConnID)
	if err != nil {
		return nil, err
	}
	u, err := operator.HTTPTarget(base, t.ConnID, t.Endpoint)
	if err != nil {
		return nil, trigger.Permanent(err)
	}
	return u, nil
}
