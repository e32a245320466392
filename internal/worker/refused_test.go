package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/execclient"
)

// refusingServer answers the Execution API as an api-server refusing the
// worker on route (a path suffix) with status and detail. A claim it does
// not refuse waits, as a long poll of no work, until a refusal has been
// answered, then answers nothing: a claim in flight as the credential was
// revoked, answered by an api-server that had not heard of it yet.
func refusingServer(t *testing.T, route string, status int, reason, detail string) *execclient.Client {
	t.Helper()
	refused := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, route):
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(execclient.Problem{Status: status, Detail: detail, Reason: reason})
			once.Do(func() { close(refused) })
		case strings.HasSuffix(r.URL.Path, "/workloads/claim"):
			_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client go (the context ends)
			select {
			case <-refused:
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"workloads": []}`)
			case <-r.Context().Done():
			}
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	return execclient.NewClient(srv.URL+"/execution", "token", execclient.ClientOptions{Retries: -1})
}

// A worker the api-server refuses for good exits with an error saying what
// to do: its credential revoked (401 on a heartbeat, while its claim waits:
// it stops once that claim is answered — never cut, its answer may hold
// tries the server started — rather than claim again; it used to ignore
// the 401), or a --name that is not its credential's (403 on a claim: it
// retried forever).
func TestWorkerStopsWhenTheAPIServerRefusesIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, route    string
		status         int
		reason, detail string
		want           []string
	}{
		{"revoked", "/workers/heartbeat", http.StatusUnauthorized, "", "the worker credentials of \"w1\" issued up to 2026-12-05T11:55:28Z are revoked",
			[]string{"refused the worker credential", "are revoked", "weir tokens create --worker w1"}},
		{"another's name", "/workloads/claim", http.StatusForbidden, execclient.ReasonWrongWorker, "worker_id \"w1\" does not match the worker credential's subject \"w3\"",
			[]string{"refuses this worker", "does not match", "--name its credential was issued for"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &Worker{Client: refusingServer(t, tc.route, tc.status, tc.reason, tc.detail), WorkerID: "w1", HeartbeatInterval: 20 * time.Millisecond}
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

// Any other 403 on a claim (a proxy's rule, say) is retried, as before: not
// the api-server's word on this worker.
func TestWorkerRetriesAnotherForbidden(t *testing.T) {
	t.Parallel()
	w := &Worker{Client: refusingServer(t, "/workloads/claim", http.StatusForbidden, "", "blocked by rule 7"), WorkerID: "w1",
		HeartbeatInterval: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Start(ctx) }()
	select {
	case err := <-errc:
		t.Fatalf("the worker stopped on a proxy's 403: %v", err)
	case <-time.After(1500 * time.Millisecond): // a retry a second
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("the worker stopped by its context: %v", err)
	}
}
