package execclient

import (
	"context"
	"net/http"
	"net/url"
)

// Connection is a named connection as a running task sees it.
type Connection struct {
	ConnID string `json:"conn_id"`
	URI    string `json:"uri"`
}

// ConnectionURI returns the URI of a connection stored in the database
// (created with `weir connections add` or the REST API). It makes a task's
// Client an operator.ConnectionLookup.
func (c *Client) ConnectionURI(ctx context.Context, connID string) (string, error) {
	var out Connection
	if err := c.do(ctx, call{method: http.MethodGet, path: "/connections/" + url.PathEscape(connID), out: &out}); err != nil {
		return "", err
	}
	return out.URI, nil
}
