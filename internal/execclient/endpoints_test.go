package execclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/execclient"
)

// A worker given several api-servers goes on with the next when one is
// down (no answer) or unavailable (503), and every client derived for a
// try follows the move: the first calls reach the live server.
func TestClientMovesToTheNextAPIServer(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens: connection refused
	var busyCalls, liveCalls atomic.Int32
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		busyCalls.Add(1)
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(busy.Close)
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		liveCalls.Add(1)
		_, _ = w.Write([]byte(`{"status":"healthy"}`))
	}))
	t.Cleanup(live.Close)

	opts := execclient.ClientOptions{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond}
	c := execclient.NewClient(down.URL+"/, "+busy.URL+","+live.URL+"/", "t", opts)
	if got := c.BaseURL(); got != down.URL {
		t.Fatalf("BaseURL = %q, want the first, %q", got, down.URL)
	}
	if err := c.Health(context.Background()); err != nil {
		t.Fatalf("health with one api-server live of three: %v", err)
	}
	if busyCalls.Load() != 1 || liveCalls.Load() != 1 || c.BaseURL() != live.URL {
		t.Fatalf("calls: busy %d live %d, now at %s; want one each, now at the live one", busyCalls.Load(), liveCalls.Load(), c.BaseURL())
	}
	tc := c.WithToken("try-token", execclient.TaskIdentity{TIID: "ti"})
	if err := tc.Health(context.Background()); err != nil || liveCalls.Load() != 2 || busyCalls.Load() != 1 {
		t.Fatalf("a try's client: err %v, live %d busy %d; want it at the live server at once", err, liveCalls.Load(), busyCalls.Load())
	}
}
