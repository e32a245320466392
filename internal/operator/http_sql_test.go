package operator

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// conns is a ConnectionLookup over a map.
type conns map[string]string

func (c conns) ConnectionURI(_ context.Context, id string) (string, error) {
	if u, ok := c[id]; ok {
		return u, nil
	}
	return "", fmt.Errorf("connection %q: %w", id, core.ErrNotFound)
}

func opReq(op string, args map[string]any) (*Request, *bytes.Buffer, *Redactor) {
	var out bytes.Buffer
	rd := NewRedactor(&out)
	return &Request{TI: core.TaskInstance{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1},
		Task: core.Task{TaskID: "t", Operator: op}, Args: args, Log: rd, Mask: rd.Add}, &out, rd
}

func TestHTTPOperator(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/api/v1/items":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "user": user, "pw_ok": pw == "s3cr3t-pw",
				"body": string(body), "ct": r.Header.Get("Content-Type"), "x": r.Header.Get("X-Trace"), "q": r.URL.RawQuery})
		case "/api/v1/text":
			_, _ = w.Write([]byte("plain"))
		default:
			http.Error(w, "no such thing", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	uri := strings.Replace(srv.URL, "http://", "http://alice:s3cr3t-pw@", 1) + "/api/v1/"
	r := &Runner{Connections: conns{"svc": uri}}
	ctx := context.Background()

	req, log, rd := opReq(HTTP, map[string]any{"http_conn_id": "svc", "endpoint": "items?a=1",
		"data": map[string]any{"n": 1.0}, "headers": map[string]any{"X-Trace": "abc"}})
	res, err := r.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(res.ReturnValue, &got)
	want := map[string]any{"method": "POST", "user": "alice", "pw_ok": true, "body": `{"n":1}`, "ct": "application/json", "x": "abc", "q": "a=1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	_, _ = fmt.Fprintf(rd, "the uri was %s\n", uri)
	_ = rd.Flush()
	if strings.Contains(log.String(), "s3cr3t-pw") {
		t.Fatalf("password in log: %s", log.String())
	}

	req, _, _ = opReq(HTTP, map[string]any{"http_conn_id": "svc", "endpoint": "text", "method": "GET"})
	if res, err = r.Run(ctx, req); err != nil || res.ReturnValue != nil {
		t.Fatalf("non-JSON body: %s %v", res.ReturnValue, err)
	}
	req, _, _ = opReq(HTTP, map[string]any{"http_conn_id": "svc", "endpoint": "missing", "method": "GET"})
	if _, err = r.Run(ctx, req); err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("404: %v", err)
	}
	req, _, _ = opReq(HTTP, map[string]any{"http_conn_id": "nope", "endpoint": "x"})
	if _, err = r.Run(ctx, req); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown conn: %v", err)
	}
	req, _, _ = opReq(HTTP, map[string]any{"http_conn_id": "svc", "endpoint": "http://elsewhere/x"})
	if _, err = r.Run(ctx, req); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("absolute endpoint with a connection: %v", err)
	}
}

func TestSQLOperatorSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data.db")
	r := &Runner{Connections: conns{"db": "sqlite://" + path}, MaxSQLRows: 2}
	ctx := context.Background()
	req, _, _ := opReq(SQL, map[string]any{"conn_id": "db", "sql": []any{
		"CREATE TABLE t (id INTEGER, name TEXT, note BLOB)",
		"INSERT INTO t VALUES (1, 'a', x'6869'), (2, 'b', NULL), (3, 'c', NULL)",
		"SELECT id, name, note FROM t ORDER BY id",
	}})
	res, err := r.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.ReturnValue), `[{"id":1,"name":"a","note":"hi"},{"id":2,"name":"b","note":null}]`; got != want {
		t.Fatalf("rows = %s, want %s", got, want)
	}
	req, _, _ = opReq(SQL, map[string]any{"conn_id": "db", "sql": "DELETE FROM t WHERE id = 3"})
	if res, err = r.Run(ctx, req); err != nil || res.ReturnValue != nil {
		t.Fatalf("delete: %s %v", res.ReturnValue, err)
	}
	db, _ := sql.Open("sqlite", path)
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows left = %d, %v", n, err)
	}
	req, _, _ = opReq(SQL, map[string]any{"conn_id": "db", "sql": "SELEKT 1"})
	if _, err = r.Run(ctx, req); err == nil || !strings.Contains(err.Error(), "statement 1") {
		t.Fatalf("bad sql: %v", err)
	}
	req, _, _ = opReq(SQL, map[string]any{"conn_id": "db"})
	if _, err = r.Run(ctx, req); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("missing sql: %v", err)
	}
}

func TestGoOperator(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	if err := reg.Register("double", func(_ context.Context, tc TaskContext) (any, error) {
		tc.Logger.Info("doubling", "n", tc.Params["n"])
		return map[string]any{"n": tc.Params["n"].(float64) * 2, "task": tc.TaskID}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = reg.Register("boom", func(context.Context, TaskContext) (any, error) { panic("kaboom") })
	_ = reg.Register("skip", func(context.Context, TaskContext) (any, error) {
		return nil, fmt.Errorf("nothing to do: %w", ErrSkipped)
	})
	if err := reg.Register("double", func(context.Context, TaskContext) (any, error) { return nil, nil }); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("duplicate register: %v", err)
	}
	r := &Runner{Registry: reg}
	ctx := context.Background()

	req, log, _ := opReq(Go, map[string]any{"function": "double"})
	req.Params = map[string]any{"n": 21.0}
	res, err := r.Run(ctx, req)
	if err != nil || string(res.ReturnValue) != `{"n":42,"task":"t"}` {
		t.Fatalf("double: %s %v", res.ReturnValue, err)
	}
	_ = req.Log.(*Redactor).Flush()
	if !strings.Contains(log.String(), "doubling") || !strings.Contains(log.String(), "task_id=t") {
		t.Fatalf("log = %q", log.String())
	}
	req, log, _ = opReq(Go, map[string]any{"function": "boom"})
	if _, err := r.Run(ctx, req); err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic: %v", err)
	}
	_ = req.Log.(*Redactor).Flush()
	if !strings.Contains(log.String(), "goroutine") {
		t.Fatal("no stack in the log after a panic")
	}
	req, _, _ = opReq(Go, map[string]any{"function": "skip"})
	if _, err := r.Run(ctx, req); !errors.Is(err, ErrSkipped) {
		t.Fatalf("skip: %v", err)
	}
	req, _, _ = opReq(Go, map[string]any{"function": "missing"})
	if _, err := r.Run(ctx, req); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}
