package execclient

import (
	"errors"
	"net/http"
)

// The Execution API's version (calendar versioning, as Airflow's): every
// request carries the client's in APIVersionHeader, every answer the
// server's. A server accepts clients from OldestAPIVersion to its own
// APIVersion and refuses others with 400 and ReasonUnsupportedVersion,
// naming both versions; a request without the header is taken as the
// server's own version. Bump APIVersion when the wire changes in a way an
// older peer would misread, and OldestAPIVersion when the server stops
// answering an older client correctly (docs/architecture.md#versions).
const (
	APIVersionHeader = "Weir-API-Version"
	APIVersion       = "2026-12-04" // a final state report claims the worker's next try (StateRequest.Next)
	OldestAPIVersion = "2026-12-01"
)

// ReasonUnsupportedVersion is the reason of a request whose client version
// the server does not support.
const ReasonUnsupportedVersion = "unsupported_api_version"

// IsVersionMismatch reports whether err is the server's refusal of this
// client's API version: retrying cannot help, one side must be upgraded.
func IsVersionMismatch(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Problem.Reason == ReasonUnsupportedVersion
}
