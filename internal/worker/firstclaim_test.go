package worker

import (
	"bytes"
	"encoding/json"
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
// asks for tries), whether it reclaimed.
type requestLog struct {
	next     http.RoundTripper
	mu       sync.Mutex
	paths    []string
	reclaims []bool
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/workloads/claim") && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		var c execclient.ClaimRequest
		if json.Unmarshal(b, &c) == nil && c.Limit > 0 {
			l.mu.Lock()
			l.reclaims = append(l.reclaims, c.Reclaim)
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
