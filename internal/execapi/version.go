package execapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// versioned answers every request with the server's Execution API version
// and refuses a client whose version it does not support
// (execclient.APIVersion), naming both and which side to upgrade, before
// any handler runs.
func (s *server) versioned(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(execclient.APIVersionHeader, execclient.APIVersion)
		if err := checkVersion(r.Header.Get(execclient.APIVersionHeader)); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkVersion checks a client's version (the header's value; "" = this
// server's own).
func checkVersion(v string) error {
	if v == "" || v == execclient.APIVersion {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, v); err != nil {
		return fmt.Errorf("header %s: %q is not a version (YYYY-MM-DD): %w", execclient.APIVersionHeader, v, core.ErrInvalid)
	}
	supported := fmt.Sprintf("this api-server speaks Execution API %s to %s", execclient.OldestAPIVersion, execclient.APIVersion)
	switch {
	case v > execclient.APIVersion: // ISO dates compare as strings
		return withStatus(http.StatusBadRequest, execclient.ReasonUnsupportedVersion, fmt.Errorf(
			"the client (a worker or the in-task CLI) speaks Execution API %s, newer than this api-server: %s; "+
				"upgrade the api-servers first, then the workers", v, supported))
	case v < execclient.OldestAPIVersion:
		return withStatus(http.StatusBadRequest, execclient.ReasonUnsupportedVersion, fmt.Errorf(
			"the client (a worker or the in-task CLI) speaks Execution API %s, older than this api-server supports: %s; "+
				"upgrade the workers", v, supported))
	}
	return nil
}

// speaks reports whether the request's client speaks version v or a later
// one (a request without the header speaks the server's own).
func speaks(r *http.Request, v string) bool {
	c := r.Header.Get(execclient.APIVersionHeader)
	return c == "" || c >= v // ISO dates compare as strings
}

// forOlderClient adapts workloads to a client older than
// execclient.NoRetryVersion, which bounds a poke sensor's wait by its
// execution timeout only: the sensor's timeout, now in its args, becomes
// that again.
func forOlderClient(r *http.Request, wls []execclient.Workload) {
	if speaks(r, execclient.NoRetryVersion) {
		return
	}
	for i := range wls {
		t := &wls[i].Task
		timeout, _ := t.Args["timeout"].(string)
		if d, err := time.ParseDuration(timeout); err == nil && d > 0 && t.Operator == "sensor" && t.ExecutionTimeout == 0 {
			t.ExecutionTimeout = core.Duration(d)
		}
	}
}
