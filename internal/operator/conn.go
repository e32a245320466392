package operator

import (
	"context"
	"fmt"
	"net/url"

	"github.com/weirflow/weir/internal/core"
)

// connection resolves connID and masks its password in the try's log.
func (r *Runner) connection(ctx context.Context, req *Request, connID string) (*url.URL, error) {
	if r.Connections == nil {
		return nil, fmt.Errorf("connection %q: the worker has no connections configured: %w", connID, core.ErrNotFound)
	}
	uri, err := r.Connections.ConnectionURI(ctx, connID)
	if err != nil {
		return nil, fmt.Errorf("look up connection %q: %w", connID, err)
	}
	u, err := url.Parse(uri)
	if err != nil {
		// The URI may hold a password: never echo it.
		return nil, fmt.Errorf("connection %q has an invalid URI: %w", connID, core.ErrInvalid)
	}
	if pw, ok := u.User.Password(); ok {
		req.mask(pw)
		req.mask(url.QueryEscape(pw))
		req.mask(url.PathEscape(pw))
	}
	return u, nil
}
