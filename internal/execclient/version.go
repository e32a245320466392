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
	APIVersion       = InterruptedVersion // the newest change is its own; the others: docs/architecture.md#versions
	OldestAPIVersion = "2026-12-01"
)

// SlimRunVersion is the first version whose started workloads leave out of
// their run context (Workload.Run) the try and the run the workload carries
// itself (the client restores them: RestoreRun); servers answer older
// clients with both.
const SlimRunVersion = "2026-12-05"

// NoRetryVersion is the first version whose workers may end a try failed
// for good (StateRequest.NoRetry) and bound a poke sensor's wait by the
// timeout in its args; servers give older clients that timeout as the
// sensor's execution timeout, as it was before.
const NoRetryVersion = "2026-12-06"

// InterruptedVersion is the first version whose workers may end a try
// interrupted by their shutdown (StateRequest.Interrupted): retried at
// once, the try refunded. An older server refuses the field.
const InterruptedVersion = "2026-12-07"

// ReasonUnsupportedVersion is the reason of a request whose client version
// the server does not support.
const ReasonUnsupportedVersion = "unsupported_api_version"

// IsVersionMismatch reports whether err is the server's refusal of this
// client's API version: retrying cannot help, one side must be upgraded.
func IsVersionMismatch(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Problem.Reason == ReasonUnsupportedVersion
}
