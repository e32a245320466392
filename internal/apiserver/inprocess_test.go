package apiserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/apiserver"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// The in-process transport answers as the server does over TCP: same
// routes, status, headers and body, the request's method, path, query,
// headers and body reaching the handler; a panicking handler fails the
// request, not the process.
func TestInProcessAnswersAsOverTCP(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	exec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("panic") != "" {
			panic("boom")
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", r.Method+" "+r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, r.URL.Path+"?"+r.URL.RawQuery+" "+string(b))
	})
	srv := &apiserver.Server{Addr: "127.0.0.1:0", Store: st, API: h, Exec: exec}
	client := &http.Client{Transport: srv.InProcess()}

	req, _ := http.NewRequest(http.MethodPatch, "http://weir.invalid/execution/task-instances/x/run?a=1", strings.NewReader(`{"k":1}`))
	req.Header.Set("Authorization", "Bearer t")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("X-Seen") != "PATCH Bearer t" ||
		string(b) != `/execution/task-instances/x/run?a=1 {"k":1}` {
		t.Errorf("exec route: %d %v %q", resp.StatusCode, resp.Header, b)
	}

	resp, err = client.Get("http://weir.invalid/api/v2/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "metadatabase") || resp.Header.Get("Content-Type") == "" {
		t.Errorf("health: %d %v %s", resp.StatusCode, resp.Header, b)
	}

	resp, err = client.Get("http://weir.invalid/execution/x?panic=1")
	if err == nil {
		_ = resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("a panicking handler: err = %v, want the request to fail", err)
	}
}
