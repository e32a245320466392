package apiserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/apiserver"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/testutil/wait"
)

func TestServerMountsAndShutsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in for the Execution API: the server must pass the full path.
	exec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "exec "+r.URL.Path) })
	srv := &apiserver.Server{Addr: "127.0.0.1:0", Store: st, API: h, Exec: exec, HeartbeatInterval: time.Hour}
	if srv.URL() != "" {
		t.Errorf("URL before Listen = %q", srv.URL())
	}
	if _, err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	base := srv.URL()
	if !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, ":0") {
		t.Fatalf("URL = %q", base)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(runCtx) }()

	get := func(path string) (int, string, string) {
		t.Helper()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Location")
	}
	if status, body, _ := get("/api/v2/health"); status != http.StatusOK || !strings.Contains(body, "metadatabase") {
		t.Errorf("/api/v2/health: %d %s", status, body)
	}
	if status, body, _ := get("/execution/task-instances/x/heartbeat"); status != http.StatusOK || body != "exec /execution/task-instances/x/heartbeat" {
		t.Errorf("/execution: %d %q", status, body)
	}
	if status, _, loc := get("/"); status != http.StatusFound || loc != "/api/v2/health" {
		t.Errorf("/: %d Location %q", status, loc)
	}
	if status, _, _ := get("/nope"); status != http.StatusNotFound {
		t.Errorf("/nope: %d", status)
	}

	// The heartbeat is written when the server starts.
	wait.Until(t, 10*time.Second, "api-server job heartbeat", func() bool {
		jobs, err := st.JobList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.Role == apiserver.Role {
				return true
			}
		}
		return false
	})

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v after ctx done, want nil", err)
	}
	if resp, err := http.Get(base + "/api/v2/health"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after shutdown")
	}
}

func TestStartRequiresAHandler(t *testing.T) {
	t.Parallel()
	srv := &apiserver.Server{Addr: "127.0.0.1:0"}
	if err := srv.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "Server.API or Server.Exec") {
		t.Errorf("Start without API and Exec: %v", err)
	}
}

// A server with only the Execution API (`dags test`) serves its worker
// over real HTTP and nothing else: no REST API, no UI, no redirect to a
// health endpoint it does not have.
func TestExecutionOnlyServer(t *testing.T) {
	t.Parallel()
	exec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "exec "+r.URL.Path) })
	srv := &apiserver.Server{Addr: "127.0.0.1:0", Exec: exec}
	if _, err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]int{"/execution/health": http.StatusOK, "/api/v2/health": http.StatusNotFound, "/": http.StatusNotFound} {
		resp, err := client.Get(srv.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusOK && string(b) != "exec "+path) {
			t.Errorf("GET %s: %d %q, want %d", path, resp.StatusCode, b, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v after ctx done, want nil", err)
	}
}

func TestListenError(t *testing.T) {
	t.Parallel()
	srv := &apiserver.Server{Addr: "256.0.0.1:bad"}
	if _, err := srv.Listen(); err == nil || !strings.Contains(err.Error(), "256.0.0.1:bad") {
		t.Errorf("Listen on a bad address: %v", err)
	}
}

// With a UI, every path outside /api/v2/ and /execution/ is the UI's.
func TestServerMountsUI(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	web := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ui "+r.URL.Path) })
	srv := &apiserver.Server{API: h, UI: web}
	for path, want := range map[string]string{"/": "ui /", "/dags/etl": "ui /dags/etl", "/api/v2/version": `"version"`} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d %q, want 200 with %q", path, rec.Code, rec.Body.String(), want)
		}
	}
	// Airflow 3's token path is the REST API's, not the UI's.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/auth/token", strings.NewReader(`{"username": "nobody", "password": "x"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "invalid username or password") {
		t.Errorf("POST /auth/token: %d %q, want the REST API's 401", rec.Code, rec.Body.String())
	}
}

// A browser's cross-origin request that changes something never reaches the
// REST API (a page of a sibling site riding the login cookie); reads, and
// clients that are not browsers, do.
func TestCrossOriginWritesAreRefused(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	srv := &apiserver.Server{Addr: "127.0.0.1:0", Store: st, API: h, HeartbeatInterval: time.Hour}
	do := func(method, path string, header map[string]string) int {
		t.Helper()
		req := httptest.NewRequest(method, "http://weir.internal"+path, strings.NewReader(`{"username":"admin","password":"wrong"}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	for _, c := range []struct {
		name, method string
		header       map[string]string
		want         int
	}{
		{"a cross-site form's login", http.MethodPost, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a sibling site's login", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"an older browser's, another origin", http.MethodPost, map[string]string{"Origin": "http://evil.internal:8081"}, http.StatusForbidden},
		{"the UI's own", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusUnauthorized},
		{"a script's (no browser headers)", http.MethodPost, nil, http.StatusUnauthorized},
		{"a cross-site read", http.MethodGet, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusOK},
	} {
		path := "/api/v2/auth/login"
		if c.method == http.MethodGet {
			path = "/api/v2/health"
		}
		if got := do(c.method, path, c.header); got != c.want {
			t.Errorf("%s: %s %s answered %d, want %d", c.name, c.method, path, got, c.want)
		}
	}
}
