package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// requestLog notes each request's path and, for a task claim (one that
// asks for tries), whether it reclaimed; it counts the callback claims.
type requestLog struct {
	next           http.RoundTripper
	mu             sync.Mutex
	paths          []string
	reclaims       []bool
	callbackClaims int
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/workloads/claim") && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		var c execclient.ClaimRequest
		if json.Unmarshal(b, &c) == nil {
			l.mu.Lock()
			if c.Limit > 0 {
				l.reclaims = append(l.reclaims, c.Reclaim)
			}
			if c.CallbackLimit > 0 {
				l.callbackClaims++
			}
			l.mu.Unlock()
		}
	}
	l.mu.Lock()
	l.paths = append(l.paths, req.URL.Path)
	l.mu.Unlock()
	return l.next.RoundTrip(req)
}

// A worker's first claim takes back what a previous life of it claimed
// and never started, unless it has no previous life (`weir dags test`'s,
// whose run is new); and it asks an api-server for its API version unless
// the api-server is in its own process (Via), the same binary.
func TestFirstClaim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                      string
		inProcess, noPreviousLife bool
		wantReclaim, wantHealth   bool
	}{
		{name: "deployment", wantReclaim: true, wantHealth: true},
		{name: "standalone", inProcess: true, wantReclaim: true},
		{name: "dags test", inProcess: true, noPreviousLife: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := execapitest.New(t, execapi.Config{})
			log := &requestLog{next: http.DefaultTransport}
			client := workerClientVia(t, env, log)
			if tc.inProcess {
				client = workerClientVia(t, env, http.DefaultTransport).Via(log)
			}
			if client.InProcess() != tc.inProcess {
				t.Fatalf("InProcess() = %t, want %t", client.InProcess(), tc.inProcess)
			}
			startWorker(t, env, nil, func(w *Worker) { w.Client, w.NoPreviousLife = client, tc.noPreviousLife })
			wait.Until(t, 30*time.Second, "the first task claim", func() bool {
				log.mu.Lock()
				defer log.mu.Unlock()
				return len(log.reclaims) > 0
			})
			log.mu.Lock()
			defer log.mu.Unlock()
			if log.reclaims[0] != tc.wantReclaim {
				t.Errorf("the first claim reclaims: %t, want %t", log.reclaims[0], tc.wantReclaim)
			}
			health := false
			for _, p := range log.paths {
				health = health || strings.HasSuffix(p, "/health")
			}
			if health != tc.wantHealth {
				t.Errorf("asked the api-server's version (/health): %t, want %t; requests %v", health, tc.wantHealth, log.paths)
			}
		})
	}
}

// A worker claims fired callbacks beside its tries, unless told it has
// none to claim (NoCallbacks: `weir dags test` of a DAG that declares
// none).
func TestNoCallbacksClaimsNone(t *testing.T) {
	t.Parallel()
	for _, noCallbacks := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoCallbacks=%t", noCallbacks), func(t *testing.T) {
			t.Parallel()
			env := execapitest.New(t, execapi.Config{})
			log := &requestLog{next: http.DefaultTransport}
			client := workerClientVia(t, env, http.DefaultTransport).Via(log)
			startWorker(t, env, nil, func(w *Worker) {
				w.Client, w.NoCallbacks = client, noCallbacks
				w.ClaimWait = 50 * time.Millisecond // an empty claim answers soon, and the next is sent
			})
			claims := func() (tasks, callbacks int) {
				log.mu.Lock()
				defer log.mu.Unlock()
				return len(log.reclaims), log.callbackClaims
			}
			if noCallbacks {
				// A callback claim loop would have claimed beside the
				// task claims, as often.
				wait.Until(t, 30*time.Second, "three task claims", func() bool { n, _ := claims(); return n >= 3 })
				if _, n := claims(); n != 0 {
					t.Errorf("callback claims = %d, want none", n)
				}
				return
			}
			wait.Until(t, 30*time.Second, "a callback claim", func() bool { _, n := claims(); return n > 0 })
		})
	}
}
