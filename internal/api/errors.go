package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
)

// StatusOf maps an error to the HTTP status the API answers it with:
// core.ErrNotFound → 404, ErrConflict → 409, ErrInvalid → 400,
// ErrTooLarge → 413, ErrForbidden → 403, ErrUnauthorized → 401,
// ErrUnavailable → 503 (the database is unreachable; retry),
// secrets.ErrUndecryptable → 409, a huma status error → its own status,
// anything else → 500.
func StatusOf(err error) int {
	var se huma.StatusError
	switch {
	case errors.As(err, &se):
		return se.GetStatus()
	case errors.Is(err, core.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, core.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, core.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, core.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, core.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, core.ErrUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, core.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, secrets.ErrUndecryptable): // a stored value this node's key file cannot open: say so, no retry mends it
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// problem turns err into the problem+json error a handler returns. The
// detail is the wrapped error's message, which names the id or field at
// fault (publicDetail).
func (s *server) problem(ctx context.Context, err error) error {
	var se huma.StatusError
	if errors.As(err, &se) {
		return se
	}
	status, detail := s.publicDetail(ctx, err)
	return huma.NewError(status, detail)
}

// publicDetail returns the status and the detail a caller is answered err
// with: its message, but for an unexpected error (500) and a database out
// of reach (503), whose messages name internals (the database's user, host
// and port): those are logged, and answered in general terms.
func (s *server) publicDetail(ctx context.Context, err error) (int, string) {
	switch status := StatusOf(err); status {
	case http.StatusInternalServerError:
		s.log.ErrorContext(ctx, "api request failed", "err", err)
		return status, "internal error; the api-server log has the details"
	case http.StatusServiceUnavailable:
		s.log.WarnContext(ctx, "api request failed: the database is unavailable", "err", err)
		return status, "the database is unavailable; retry shortly (the api-server log has the details)"
	default:
		return status, err.Error()
	}
}

// invalid returns a 400 problem naming what is wrong with the input.
func invalid(msg string) error { return huma.NewError(http.StatusBadRequest, msg) }
