package operator

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/weirflow/weir/internal/core"
)

// connection resolves connID and masks its password in the try's log.
func (r *Runner) connection(ctx context.Context, req *Request, connID string) (*url.URL, error) {
	lookup := Chain(r.Connections, req.Connections)
	uri, err := lookup.ConnectionURI(ctx, connID)
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

// Chain looks a connection up in each lookup in turn (nil ones are skipped)
// and returns the first found; core.ErrNotFound when none has it.
func Chain(lookups ...ConnectionLookup) ConnectionLookup { return chain(lookups) }

type chain []ConnectionLookup

func (c chain) ConnectionURI(ctx context.Context, connID string) (string, error) {
	var errs []error
	for _, l := range c {
		if l == nil {
			continue
		}
		uri, err := l.ConnectionURI(ctx, connID)
		if err == nil {
			return uri, nil
		}
		if !errors.Is(err, core.ErrNotFound) {
			return "", err
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return "", fmt.Errorf("connection %q is not defined: %w", connID, core.ErrNotFound)
	}
	return "", errors.Join(errs...)
}
