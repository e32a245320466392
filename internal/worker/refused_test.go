package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/execclient"
)

// refusingServer answers the Execution API as an api-server refusing the
// worker on route (a path suffix) with status and detail; a claim it does
// not refuse waits until the client gives up, as a long poll of no work.
func refusingServer(t *testing.T, route string, status int, detail string) *execclient.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, route):
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(execclient.Problem{Status: status, Detail: detail})
		case strings.HasSuffix(r.URL.Path, "/workloads/claim"):
			_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client go (the context ends)
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	return execclient.NewClient(srv.URL+"/execution", "token", execclient.ClientOptions{Retries: -1})
}

// A worker the api-server refuses for good exits with an error saying what
// to do, at once: its credential revoked (401 on a heartbeat, while its
// claim waits — it used to go on until the claim answered, up to the claim
// wait, and be handed tries meanwhile), or a --name that is not its
// credential's (403 on a claim: it retried forever).
func TestWorkerStopsWhenTheAPIServerRefusesIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, route string
		status      int
		detail      string
		want        []string
	}{
		{"revoked", "/workers/heartbeat", http.StatusUnauthorized, "the worker credentials of \"w1\" issued up to 2026-12-05T11:55:28Z are revoked",
			[]string{"refused the worker credential", "are revoked", "weir tokens create --worker w1"}},
		{"another's name", "/workloads/claim", http.StatusForbidden, "worker_id \"w1\" does not match the worker credential's subject \"w3\"",
			[]string{"refuses this worker", "does not match", "--name its credential was issued for"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &Worker{Client: refusingServer(t, tc.route, tc.status, tc.detail), WorkerID: "w1", HeartbeatInterval: 20 * time.Millisecond}
			errc := make(chan error, 1)
			go func() { errc <- w.Start(context.Background()) }()
			select {
			case err := <-errc:
				for _, want := range tc.want {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("the refused worker's error: %v; want it to say %q", err, want)
					}
				}
			case <-time.After(20 * time.Second): // its claim waits 30 s
				t.Fatal("the refused worker did not stop")
			}
		})
	}
}
