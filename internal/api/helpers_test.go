package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// env is one API server over a fresh SQLite store, with one user and token
// per role and the "etl" DAG (extract → transform → load) synced.
type env struct {
	t      *testing.T
	st     store.Store
	clk    *clocktest.Clock
	srv    *httptest.Server
	logs   string
	tokens map[core.Role]string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	e := &env{t: t, st: st, clk: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		logs: t.TempDir(), tokens: map[core.Role]string{}}
	for _, r := range []core.Role{core.RoleViewer, core.RoleOp, core.RoleAdmin} {
		e.addUser(string(r), r, "x")
		secret, hash := auth.NewToken()
		if err := st.APITokenCreate(ctx, &core.APIToken{ID: string(r) + "-token", Name: string(r), Username: string(r),
			Hash: hash, CreatedAt: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		e.tokens[r] = secret
	}
	e.syncDag(etlDAG())
	h, err := api.NewHandler(api.Config{Store: st, Clock: e.clk, SecretKey: []byte("0123456789abcdef0123456789abcdef"),
		LogFolder: e.logs, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

// addUser stores a user whose password hash is passwordHash.
func (e *env) addUser(name string, role core.Role, passwordHash string) {
	e.t.Helper()
	if err := e.st.UserUpsert(context.Background(), &core.User{Username: name, Role: string(role),
		PasswordHash: passwordHash, CreatedAt: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

func etlDAG() core.DAG {
	return core.DAG{DagID: "etl", Description: "extract, transform, load", Tags: []string{"demo"}, FileLoc: "/dags/etl.yaml",
		Tasks: []core.Task{
			{TaskID: "extract", Operator: "noop"},
			{TaskID: "transform", Operator: "noop", DependsOn: []string{"extract"}, Retries: 2, RetryDelay: core.Duration(time.Minute)},
			{TaskID: "load", Operator: "noop", DependsOn: []string{"transform"}, Pool: "db"},
		}}
}

func (e *env) syncDag(d core.DAG) {
	e.t.Helper()
	b, _ := json.Marshal(d)
	if _, _, err := e.st.DagSync(context.Background(), &store.DagSyncParams{Spec: d, Hash: string(b), Now: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

// call sends a request as role (core.RolePublic: no credentials) and returns the
// status and body. body may be nil, a string (sent raw) or a value (JSON).
func (e *env) call(role core.Role, method, path string, body any, hdr ...string) (int, []byte) {
	e.t.Helper()
	resp := e.request(role, method, path, body, hdr...)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (e *env) request(role core.Role, method, path string, body any, hdr ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if role != core.RolePublic {
		req.Header.Set("Authorization", "Bearer "+e.tokens[role])
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// must calls and fails the test unless the status is want; it decodes the
// JSON body into out when out is not nil.
func (e *env) must(want int, role core.Role, method, path string, body, out any) {
	e.t.Helper()
	status, b := e.call(role, method, path, body)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// problem is an RFC 9457 body.
type problem struct {
	Status int    `json:"status"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

// text is the detail and every error's location and message.
func (p problem) text() string {
	s := p.Detail
	for _, e := range p.Errors {
		s += "; " + e.Location + ": " + e.Message
	}
	return s
}

// mustProblem calls, checks the status and that the response is
// problem+json whose detail contains every one of wantInDetail.
func (e *env) mustProblem(want int, role core.Role, method, path string, body any, wantInDetail ...string) problem {
	e.t.Helper()
	resp := e.request(role, method, path, body)
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, resp.StatusCode, want, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		e.t.Errorf("%s %s: Content-Type %q, want application/problem+json", method, path, ct)
	}
	var p problem
	if err := json.Unmarshal(b, &p); err != nil {
		e.t.Fatalf("%s %s: decode problem %s: %v", method, path, b, err)
	}
	if p.Status != want {
		e.t.Errorf("%s %s: problem status %d, want %d", method, path, p.Status, want)
	}
	for _, w := range wantInDetail {
		if !strings.Contains(p.text(), w) {
			e.t.Errorf("%s %s: problem %q does not contain %q", method, path, p.text(), w)
		}
	}
	return p
}

// audit returns the audit log, newest first as the store lists it.
func (e *env) audit() []core.AuditEntry {
	e.t.Helper()
	entries, err := e.st.AuditLogList(context.Background(), &store.AuditLogListParams{Page: store.Page{Limit: 100}})
	if err != nil {
		e.t.Fatal(err)
	}
	return entries
}

// hasAudit reports whether the audit log holds (user, action, target).
func (e *env) hasAudit(user, action, target string) bool {
	for _, a := range e.audit() {
		if a.User == user && a.Action == action && a.Target == target {
			return true
		}
	}
	return false
}

// trigger creates a run of etl with run id id through the API.
func (e *env) trigger(id string) core.DagRun {
	e.t.Helper()
	var run core.DagRun
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns", map[string]any{"dag_run_id": id}, &run)
	return run
}

// setTIState forces a task instance's state in the store.
func (e *env) setTIState(runID, taskID string, st core.TIState) {
	e.t.Helper()
	ctx := context.Background()
	ti, err := e.st.TaskInstanceGetByKey(ctx, "etl", runID, taskID, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: st, Now: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}
