package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(s3test.Wrap(m))) }

// surfaces is one database reached from the admin CLI (cli.Run, with its
// own store, as a separate `weir` process would) and from the REST API (a
// server over the test's store), with the "etl" DAG and an admin "otto"
// who has an API token.
type surfaces struct {
	t       *testing.T
	st      *sqlstore.Store
	env     []string
	srv     *httptest.Server
	token   string
	crossPC bool   // notifications cross processes (PostgreSQL)
	logs    string // the task log folder of both transports
}

func newSurfaces(t *testing.T, engine string) *surfaces {
	t.Helper()
	ctx := t.Context()
	home := t.TempDir()
	// Both transports read the logs of one folder (log_store = folder, a
	// shared folder, as in a standalone of an earlier home).
	s := &surfaces{t: t, env: []string{"WEIR_HOME=" + home, "USER=tester", "WEIR__LOGGING__LOG_STORE=folder"}}
	switch engine {
	case "sqlite":
		path := filepath.Join(home, "weir.db")
		s.run("db", "migrate")
		st, err := sqlite.Open(ctx, path, sqlite.Options{Secrets: homeBox(t, home)})
		if err != nil {
			t.Fatal(err)
		}
		s.st = st
	default:
		dsn := pgtest.DSN(t)
		s.crossPC = true
		s.env = append(s.env, "WEIR__DATABASE__CONN="+dsn)
		s.run("db", "migrate")
		st, err := postgres.Open(ctx, dsn, postgres.Options{Secrets: homeBox(t, home)})
		if err != nil {
			t.Fatal(err)
		}
		s.st = st
	}
	t.Cleanup(func() { s.st.Close() })
	dag := core.DAG{DagID: "etl", Tasks: []core.Task{{TaskID: "extract", Operator: "noop"}, {TaskID: "load", Operator: "noop", DependsOn: []string{"extract"}}}}
	if _, _, err := s.st.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: "h", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: s.st})
	if err := svc.SaveUser(ctx, core.System, "otto", "pw", core.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	var err error
	if s.token, err = svc.CreateAPIToken(ctx, core.System, "otto", "test", 0); err != nil {
		t.Fatal(err)
	}
	// The api-server reads the logs the local CLI does.
	s.logs = filepath.Join(home, "logs")
	h, err := api.NewHandler(api.Config{Store: s.st, SecretKey: []byte("0123456789abcdef0123"), Service: svc, LogFolder: s.logs})
	if err != nil {
		t.Fatal(err)
	}
	s.srv = httptest.NewServer(h)
	t.Cleanup(s.srv.Close)
	return s
}

// onEachEngine runs fn as a parallel subtest on SQLite and on PostgreSQL,
// with a fresh surfaces on each.
func onEachEngine(t *testing.T, fn func(t *testing.T, s *surfaces)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, newSurfaces(t, engine))
		})
	}
}

// run runs the weir CLI and fails the test unless it exits 0.
func (s *surfaces) run(args ...string) string {
	s.t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Run(s.t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: s.env}); code != 0 {
		s.t.Fatalf("weir %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// rest calls the REST API as otto and fails the test on a status >= 300.
func (s *surfaces) rest(method, path string, body any) {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(s.t.Context(), method, s.srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var p bytes.Buffer
		_, _ = p.ReadFrom(resp.Body)
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, p.String())
	}
}

// lastAudit is the newest audit entry.
func (s *surfaces) lastAudit() core.AuditEntry {
	s.t.Helper()
	es, err := s.st.AuditLogList(s.t.Context(), &store.AuditLogListParams{Page: store.Page{Limit: 1}})
	if err != nil || len(es) != 1 {
		s.t.Fatalf("audit log: %v (err %v)", es, err)
	}
	return es[0]
}

// TestCLIAndRESTShareEveryRule makes the same change from the admin CLI and
// over REST and checks both give the same result, the same audit record
// (only the user differs) and, where the scheduler must react, wake it —
// across processes on PostgreSQL.
func TestCLIAndRESTShareEveryRule(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		wake := s.st.Subscribe(ctx, store.ChannelScheduler)
		drain := func() {
			for {
				select {
				case <-wake:
				case <-time.After(200 * time.Millisecond):
					return
				}
			}
		}
		cases := []struct {
			name      string
			rest      func(*surfaces, string) // suffix distinguishes the two changes' names
			cli       func(*surfaces, string)
			wakes     bool
			wantEntry string // action target detail, with %s for the suffix
			check     func(*surfaces, string)
		}{
			{
				name:  "pause",
				rest:  func(s *surfaces, _ string) { s.rest("PATCH", "/api/v2/dags/etl", map[string]any{"is_paused": true}) },
				cli:   func(s *surfaces, _ string) { s.run("dags", "pause", "etl") },
				wakes: true, wantEntry: "dag.pause etl ",
				check: func(s *surfaces, _ string) {
					if d, _ := s.st.DagGet(ctx, "etl"); !d.IsPaused {
						t.Error("etl is not paused")
					}
					if err := s.st.DagSetPaused(ctx, "etl", false); err != nil { // for the other side
						t.Fatal(err)
					}
				},
			},
			{
				name: "trigger",
				rest: func(s *surfaces, sfx string) {
					s.rest("POST", "/api/v2/dags/etl/dagRuns", map[string]any{"dag_run_id": "r" + sfx, "conf": map[string]int{"n": 1}})
				},
				cli: func(s *surfaces, sfx string) {
					s.run("dags", "trigger", "etl", "--run-id", "r"+sfx, "--conf", `{"n": 1}`)
				},
				wakes: true, wantEntry: `dag_run.trigger etl/r%s {"n":1}`,
				check: func(s *surfaces, sfx string) {
					if r, err := s.st.DagRunGet(ctx, "etl", "r"+sfx); err != nil || r.State != core.RunQueued {
						t.Errorf("run r%s = %+v (err %v), want queued", sfx, r, err)
					}
					finishExtract(t, s.st, "r"+sfx)
				},
			},
			{
				name: "clear",
				rest: func(s *surfaces, sfx string) {
					s.rest("POST", "/api/v2/dags/etl/clearTaskInstances", map[string]any{"dag_run_id": "r" + sfx,
						"task_ids": []string{"extract"}, "only_failed": false, "dry_run": false})
				},
				cli: func(s *surfaces, sfx string) {
					s.run("tasks", "clear", "etl", "--run-id", "r"+sfx, "-t", "extract", "--yes")
				},
				wakes: true, wantEntry: "task_instance.clear etl only_failed=false keep_task_state=false etl/r%s/extract",
				check: func(s *surfaces, sfx string) {
					ti, err := s.st.TaskInstanceGetByKey(ctx, "etl", "r"+sfx, "extract", -1)
					if err != nil || ti.State != core.TINone || ti.TryNumber != 2 {
						t.Errorf("cleared extract = %+v (err %v), want a second try in state none", ti, err)
					}
				},
			},
			{
				name: "pool",
				rest: func(s *surfaces, sfx string) {
					s.rest("POST", "/api/v2/pools", map[string]any{"name": "p" + sfx, "slots": 3})
				},
				cli:   func(s *surfaces, sfx string) { s.run("pools", "set", "p"+sfx, "3") },
				wakes: true, wantEntry: "pool.create p%s slots=3",
			},
			{
				name: "connection",
				rest: func(s *surfaces, sfx string) {
					s.rest("POST", "/api/v2/connections", map[string]any{"connection_id": "c" + sfx, "uri": "https://x"})
				},
				cli:       func(s *surfaces, sfx string) { s.run("connections", "add", "c"+sfx, "https://x") },
				wantEntry: "connection.create c%s ",
			},
			{
				name: "variable",
				rest: func(s *surfaces, sfx string) {
					s.rest("POST", "/api/v2/variables", map[string]any{"key": "v" + sfx, "value": "x"})
				},
				cli:       func(s *surfaces, sfx string) { s.run("variables", "set", "v"+sfx, "x") },
				wantEntry: "variable.create v%s ",
				check: func(s *surfaces, sfx string) {
					if got := s.run("variables", "get", "v"+sfx); got != "x\n" {
						s.t.Errorf("variables get v%s = %q, want x", sfx, got)
					}
				},
			},
		}
		for _, c := range cases {
			for _, side := range []struct {
				sfx, user string
				do        func(*surfaces, string)
			}{{"rest", "otto", c.rest}, {"cli", "cli:tester", c.cli}} {
				drain()
				side.do(s, side.sfx)
				e := s.lastAudit()
				want := c.wantEntry
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, side.sfx)
				}
				if got := e.Action + " " + e.Target + " " + e.Detail; got != want || e.User != side.user {
					t.Errorf("%s via %s: audit = %q by %q, want %q by %q", c.name, side.sfx, got, e.User, want, side.user)
				}
				if c.wakes && (s.crossPC || side.sfx == "rest") {
					select {
					case <-wake:
					case <-time.After(10 * time.Second):
						t.Errorf("%s via %s did not wake the scheduler", c.name, side.sfx)
					}
				}
				if c.check != nil {
					c.check(s, side.sfx)
				}
			}
		}
	})
}

// TestTasksClearAsks checks that `weir tasks clear` lists what it selects
// and clears only after a yes: no answer changes nothing.
func TestTasksClearAsks(t *testing.T) {
	t.Parallel()
	s := newSurfaces(t, "sqlite")
	s.run("dags", "trigger", "etl", "--run-id", "r1")
	finishExtract(t, s.st, "r1")
	try := func() int {
		ti, err := s.st.TaskInstanceGetByKey(t.Context(), "etl", "r1", "extract", -1)
		if err != nil {
			t.Fatal(err)
		}
		return ti.TryNumber
	}
	var out, errOut bytes.Buffer
	code := cli.Run(t.Context(), []string{"tasks", "clear", "etl"}, cli.Options{Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errOut, Environ: s.env})
	if code == 0 || !strings.Contains(errOut.String(), "--yes") || !strings.Contains(out.String(), "extract") || try() != 1 {
		t.Errorf("no answer: exit %d, stdout %q, stderr %q, extract at try %d; want a refusal naming --yes, the list, try 1",
			code, out.String(), errOut.String(), try())
	}
	out.Reset()
	code = cli.Run(t.Context(), []string{"tasks", "clear", "etl"}, cli.Options{Stdin: strings.NewReader("y\n"),
		Stdout: &out, Stderr: &errOut, Environ: s.env})
	if code != 0 || !strings.Contains(out.String(), "cleared 1 task instances") || try() != 2 {
		t.Errorf("answer y: exit %d, stdout %q, extract at try %d; want 1 cleared, try 2", code, out.String(), try())
	}
}

// finishExtract ends run's extract instance as success, as a worker would.
func finishExtract(t *testing.T, st store.Store, runID string) {
	t.Helper()
	ctx := context.Background()
	ti, err := st.TaskInstanceGetByKey(ctx, "etl", runID, "extract", -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{ti.ID}, To: core.TISuccess, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
}
