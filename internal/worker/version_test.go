package worker

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/execclient"
)

// A worker whose Execution API version the api-server refuses (here a
// server of a later version that no longer supports it, answering as
// execapi does) stops at start with the server's message instead of
// retrying forever.
func TestWorkerStopsOnVersionMismatch(t *testing.T) {
	t.Parallel()
	const detail = "the client (a worker or the in-task CLI) speaks Execution API 2026-12-01, older than this api-server supports: " +
		"this api-server speaks Execution API 2027-06-01 to 2027-09-01; upgrade the workers"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(execclient.APIVersionHeader, "2027-09-01")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(execclient.Problem{Status: http.StatusBadRequest, Detail: detail,
			Reason: execclient.ReasonUnsupportedVersion})
	}))
	t.Cleanup(srv.Close)
	w := &Worker{Client: execclient.NewClient(srv.URL+"/execution", "token", execclient.ClientOptions{Retries: -1}), WorkerID: "w1"}
	err := w.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "upgrade the workers") || !execclient.IsVersionMismatch(err) {
		t.Errorf("Start against a server refusing its version: %v, want the server's message", err)
	}
}
