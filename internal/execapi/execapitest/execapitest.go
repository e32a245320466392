// Package execapitest runs a real Execution API for tests: a migrated
// SQLite store in a temporary folder (or a given store), token issuer, fake clock and an
// httptest server on loopback, plus helpers that seed DAG runs.
package execapitest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// Key is the signing key test tokens use.
var Key = []byte("execapitest-signing-key-0123456789abcdef")

// Env is a running Execution API.
type Env struct {
	Store  *sqlstore.Store
	Tokens *auth.Tokens
	Clock  *clocktest.Clock
	Server *httptest.Server
	URL    string // base URL ending in /execution
	LogDir string
}

// New starts an Execution API with cfg over a new SQLite store; everything
// is cleaned up with t.
func New(t testing.TB, cfg execapi.Config) *Env {
	t.Helper()
	return NewOn(t, sqlitetest.Open(t), cfg)
}

// NewOn starts an Execution API with cfg over st, a migrated store of
// either engine.
func NewOn(t testing.TB, st *sqlstore.Store, cfg execapi.Config) *Env {
	t.Helper()
	return NewWithLogs(t, st, cfg, nil)
}

// NewWithLogs is NewOn keeping shipped logs in logs (nil = the Env's
// LogDir), as an api-server with [logging] log_store = database does.
func NewWithLogs(t testing.TB, st *sqlstore.Store, cfg execapi.Config, logs tasklog.Logs) *Env {
	t.Helper()
	return newEnv(t, st, st, cfg, logs)
}

// NewServing is NewOn whose server works through serving, a store over st
// (one that counts some calls, say); the Env seeds and reads st.
func NewServing(t testing.TB, st *sqlstore.Store, serving store.Store, cfg execapi.Config) *Env {
	t.Helper()
	return newEnv(t, st, serving, cfg, nil)
}

func newEnv(t testing.TB, st *sqlstore.Store, serving store.Store, cfg execapi.Config, logs tasklog.Logs) *Env {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	tk, err := auth.NewTokens(auth.Config{Key: Key}, clk)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "logs")
	h := execapi.NewHandler(execapi.Deps{Store: serving, Tokens: tk, Clock: clk, LogFolder: dir, Logs: logs, Config: cfg})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Env{Store: st, Tokens: tk, Clock: clk, Server: srv, URL: srv.URL + "/execution", LogDir: dir}
}

// WorkerClient returns a client holding a worker credential for name.
func (e *Env) WorkerClient(t testing.TB, name string) *execclient.Client {
	t.Helper()
	tok, err := e.Tokens.IssueWorker(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	return execclient.NewClient(e.URL, tok, execclient.ClientOptions{Retries: -1})
}

// SeedRun syncs dag and creates a run of it whose task instances are all
// queued (or in state, when given), then wakes claimers.
func (e *Env) SeedRun(t testing.TB, dag core.DAG, runID string, state core.TIState) (*core.DagRun, []core.TaskInstance) {
	t.Helper()
	ctx := context.Background()
	if state == core.TINone {
		state = core.TIQueued
	}
	vid, _, err := e.Store.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: fmt.Sprintf("%s-%d", dag.DagID, len(dag.Tasks)), Now: e.Clock.Now()})
	if err != nil {
		t.Fatalf("sync dag: %v", err)
	}
	var tis []store.NewTaskInstance
	for _, task := range dag.Tasks {
		tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: task.TaskID, MapIndex: core.NoMapIndex,
			MaxTries: task.Retries + 1, Queue: task.Queue, Operator: task.Operator, State: state, PriorityWeight: 1})
	}
	run, err := e.Store.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: dag.DagID, RunID: runID, RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: vid, Now: e.Clock.Now(), TaskInstances: tis, Conf: []byte(`{"who":"conf"}`)})
	if err != nil {
		t.Fatalf("create run: %v", err)
	}
	got, err := e.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Notify(ctx, store.ChannelQueued); err != nil {
		t.Fatal(err)
	}
	return run, got
}

// TI reads a task instance's current row.
func (e *Env) TI(t testing.TB, id string) *core.TaskInstance {
	t.Helper()
	ti, err := e.Store.TaskInstanceGet(context.Background(), id)
	if err != nil {
		t.Fatalf("get task instance %s: %v", id, err)
	}
	return ti
}
