package execapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/tasklog"
)

// apiError is an error carrying the HTTP status and reason to answer with.
type apiError struct {
	status int
	reason string
	err    error
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// withStatus makes err answer status with reason.
func withStatus(status int, reason string, err error) error {
	return &apiError{status: status, reason: reason, err: err}
}

// statusOf maps an error to its HTTP status and reason, in one place.
func statusOf(err error) (int, string) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.reason
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe), errors.Is(err, core.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, ""
	case errors.Is(err, core.ErrUnauthorized):
		return http.StatusUnauthorized, ""
	case errors.Is(err, core.ErrForbidden):
		return http.StatusForbidden, ""
	case errors.Is(err, core.ErrNotFound):
		return http.StatusNotFound, ""
	case errors.Is(err, core.ErrConflict):
		return http.StatusConflict, ""
	case errors.Is(err, core.ErrInvalid):
		return http.StatusBadRequest, ""
	case errors.Is(err, core.ErrUnavailable):
		return http.StatusServiceUnavailable, ""
	case errors.Is(err, secrets.ErrUndecryptable): // this node's key file cannot open it: no retry mends it
		return http.StatusConflict, ""
	}
	return http.StatusInternalServerError, ""
}

// writeError answers err as problem+json. Internal errors are logged and
// answered without their detail; a request cancelled with its client (or
// with this server's stop: a claim's long poll at shutdown) is not an
// error, nor has anyone to answer.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		log.Debug("execution api request cancelled", "method", r.Method, "path", r.URL.Path)
		return
	}
	status, reason := statusOf(err)
	detail := err.Error()
	switch status {
	case http.StatusInternalServerError:
		log.Error("execution api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		detail = "internal error; see the api-server log"
	case http.StatusServiceUnavailable: // the driver's message names the database's user, host and port
		log.Warn("execution api request failed: the database is unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		detail = "the database is unavailable; retry shortly (the api-server log has the details)"
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	}
	p := execclient.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status,
		Detail: detail, Instance: r.URL.Path, Reason: reason}
	var gap *tasklog.GapError
	if errors.As(err, &gap) {
		p.ExpectedOffset = &gap.Size
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
