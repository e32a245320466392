package core

import "errors"

// Sentinel errors shared by every layer. Adapters translate driver errors into
// these; the API maps them to HTTP statuses in one place.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrInvalid      = errors.New("invalid input")
	ErrUnauthorized = errors.New("unauthorized")
	ErrForbidden    = errors.New("forbidden")
	ErrTooLarge     = errors.New("too large")
	// ErrUnavailable: the database could not be reached (a restart, a
	// network fault); the request may be retried.
	ErrUnavailable = errors.New("database unavailable")
)
