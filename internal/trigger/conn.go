package trigger

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/weirflow/weir/internal/core"
)

// Connection resolves connID through rt.Connections and parses its URI. A
// connection that is not defined, or whose URI does not parse, is a
// Permanent error (no later poll fixes it); a failed lookup is not. Errors
// never repeat the URI, which may hold a password.
func (rt *Runtime) Connection(ctx context.Context, connID string) (*url.URL, error) {
	if rt.Connections == nil {
		return nil, Permanent(fmt.Errorf("look up connection %q: this triggerer has no connections", connID))
	}
	uri, err := rt.Connections.ConnectionURI(ctx, connID)
	if err != nil {
		err = fmt.Errorf("look up connection %q: %w", connID, err)
		if errors.Is(err, core.ErrNotFound) {
			return nil, Permanent(err)
		}
		return nil, err
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, Permanent(fmt.Errorf("connection %q has an invalid URI: %w", connID, core.ErrInvalid))
	}
	return u, nil
}
