package execclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

func TestClientRetriesServerErrors(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"status":"healthy"}`))
	}))
	t.Cleanup(srv.Close)
	opts := execclient.ClientOptions{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond}
	if err := execclient.NewClient(srv.URL, "t", opts).Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("calls = %d, want 3", n)
	}
	opts.Retries = 1
	calls.Store(0)
	err := execclient.NewClient(srv.URL, "t", opts).Health(context.Background())
	var ae *execclient.Error
	if !errors.As(err, &ae) || ae.Status != 503 {
		t.Fatalf("err = %v, want 503 after giving up", err)
	}
}

// TestClientRetriesForAWhile: with RetryFor, a client whose Retries are
// spent keeps trying until the server answers (an outage longer than
// the retries' random back-off happened to last).
func TestClientRetriesForAWhile(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) <= 20 {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(`{"status":"healthy"}`))
	}))
	t.Cleanup(srv.Close)
	opts := execclient.ClientOptions{Retries: 2, RetryFor: time.Hour, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond}
	if err := execclient.NewClient(srv.URL, "t", opts).Health(context.Background()); err != nil {
		t.Fatalf("with RetryFor an hour: %v, want the answer after 20 failures", err)
	}
	if n := calls.Load(); n != 21 {
		t.Fatalf("calls = %d, want 21", n)
	}
}

func TestClientDoesNotRetryClientErrors(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"title":"Conflict","status":409,"detail":"nope","reason":"not_running"}`))
	}))
	t.Cleanup(srv.Close)
	err := execclient.NewClient(srv.URL, "t", execclient.ClientOptions{}).Heartbeat(context.Background(), "x", execclient.HeartbeatRequest{})
	if !errors.Is(err, core.ErrConflict) || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
}

func TestClientFromEnv(t *testing.T) {
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(execclient.EnvAPIURL, "")
	if _, err := execclient.ClientFromEnv(); err == nil {
		t.Fatal("no error without WEIR_API_URL")
	}
	for _, kv := range execclient.TaskEnv("http://x/execution", "from-env", tokFile,
		execclient.TaskIdentity{TIID: "ti", DagID: "d", RunID: "r", TaskID: "t", MapIndex: 2, TryNumber: 3}) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	c, err := execclient.ClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := execclient.TaskIdentity{TIID: "ti", DagID: "d", RunID: "r", TaskID: "t", MapIndex: 2, TryNumber: 3}
	if c.Identity != want || c.Token() != "from-file" {
		t.Fatalf("identity %+v token %q", c.Identity, c.Token())
	}
	// Until the worker writes the file (the token's first refresh), the
	// environment's token is current; without either, no client.
	if err := os.Remove(tokFile); err != nil {
		t.Fatal(err)
	}
	if c, err := execclient.ClientFromEnv(); err != nil || c.Token() != "from-env" {
		t.Fatalf("no token file yet: token %v, %v; want the environment's", c, err)
	}
	t.Setenv(execclient.EnvToken, "")
	if _, err := execclient.ClientFromEnv(); err == nil {
		t.Fatal("a client without any token")
	}
	t.Setenv(execclient.EnvToken, "from-env")
	t.Setenv(execclient.EnvMapIndex, "x")
	if _, err := execclient.ClientFromEnv(); err == nil {
		t.Fatal("bad WEIR_MAP_INDEX accepted")
	}
}

// A report that claims the worker's next try carries the worker's
// credential beside the try's token; the client follows no redirect, so
// neither reaches another host (Go strips only Authorization).
func TestWorkerCredentialFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(elsewhere.Close)
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	worker := execclient.NewClient(srv.URL+"/execution", "worker-credential", execclient.ClientOptions{Retries: -1})
	tc := worker.WithToken("try-token", execclient.TaskIdentity{TIID: "ti1"})
	_, err := tc.Finish(t.Context(), "ti1", execclient.StateRequest{State: core.TISuccess,
		Next: &execclient.NextClaim{Start: execclient.RunRequest{Hostname: "h", PID: 1}}})
	if err == nil {
		t.Fatal("a redirected report succeeded")
	}
	if got.Get("Authorization") != "Bearer try-token" || got.Get(execclient.WorkerAuthorizationHeader) != "Bearer worker-credential" {
		t.Errorf("the report's headers: Authorization %q, %s %q", got.Get("Authorization"),
			execclient.WorkerAuthorizationHeader, got.Get(execclient.WorkerAuthorizationHeader))
	}
	if reached.Load() != 0 {
		t.Error("the redirect was followed: the worker's credential reached another host")
	}
}

// A report that claims the next try is sent again, after an attempt left
// unanswered (a 5xx), without the claim: that attempt may have ended the
// try and claimed (its try is reclaimed), so the retry only ends it.
func TestReportRetryClaimsNothing(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		if len(bodies) == 1 {
			http.Error(w, "the database went away", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"state":"success"}`))
	}))
	t.Cleanup(srv.Close)
	worker := execclient.NewClient(srv.URL+"/execution", "worker-credential", execclient.ClientOptions{
		RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	tc := worker.WithToken("try-token", execclient.TaskIdentity{TIID: "ti1"})
	sr, err := tc.Finish(t.Context(), "ti1", execclient.StateRequest{State: core.TISuccess,
		Next: &execclient.NextClaim{Start: execclient.RunRequest{Hostname: "h", PID: 1}}})
	if err != nil || sr.State != core.TISuccess {
		t.Fatalf("Finish = %+v, %v", sr, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], `"next"`) || strings.Contains(bodies[1], `"next"`) {
		t.Fatalf("bodies sent: %q; want the first with next, the retry without", bodies)
	}
}
