package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/tasklog/dblog"
)

// With [logging] log_store = database, a try's log shipped in chunks to
// two api-servers (the worker moving to the other one after a lost answer,
// as across an outage) reads whole from the REST API of two api-servers
// that share nothing but the database (each its own, empty, log folder)
// and from the CLI, on SQLite and PostgreSQL.
func TestTaskLogsInTheDatabase(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		logs := dblog.Database{Store: s.st}
		first := execapitest.NewWithLogs(t, s.st, execapi.Config{}, logs)
		second := execapitest.NewWithLogs(t, s.st, execapi.Config{}, logs)
		first.SeedRun(t, core.DAG{DagID: "ship", Tasks: []core.Task{{TaskID: "talk", Operator: "noop"}}}, "r1", "")
		wls, err := first.WorkerClient(t, "w1").Claim(ctx, execclient.ClaimRequest{Limit: 1, WaitSeconds: 5})
		if err != nil || len(wls) != 1 {
			t.Fatalf("claim: %v, %d workloads", err, len(wls))
		}
		wl := wls[0]
		via := func(env *execapitest.Env) *execclient.Client {
			return execclient.NewClient(env.URL, wl.Token, execclient.ClientOptions{Retries: -1}).WithToken(wl.Token,
				execclient.TaskIdentity{TIID: wl.TI.ID, DagID: wl.TI.DagID, RunID: wl.TI.RunID, TaskID: wl.TI.TaskID, MapIndex: wl.TI.MapIndex})
		}
		if _, err := via(first).Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			env    *execapitest.Env
			offset int64
			chunk  string
			next   int64
		}{
			{first, 0, "line 1\n", 7},
			{second, 0, "line 1\nline 2\n", 14}, // sent again to the other api-server, with more
			{second, 14, "line 3\n", 21},
		} {
			next, err := via(step.env).AppendLog(ctx, wl.TI.ID, step.offset, []byte(step.chunk))
			if err != nil || next != step.next {
				t.Fatalf("AppendLog(%d, %q) = %d, %v; want %d", step.offset, step.chunk, next, err, step.next)
			}
		}
		_, err = via(first).AppendLog(ctx, wl.TI.ID, 40, []byte("lost\n"))
		if next, ok := execclient.LogGap(err); !ok || next != 21 {
			t.Errorf("a chunk past the end: %v, want a log gap naming byte 21", err)
		}
		const want = "line 1\nline 2\nline 3\n"
		path := fmt.Sprintf("/api/v2/dags/ship/dagRuns/r1/taskInstances/talk/logs/%d", wl.TI.TryNumber)
		for i := range 2 {
			h, err := api.NewHandler(api.Config{Store: s.st, SecretKey: []byte("0123456789abcdef0123"), LogFolder: t.TempDir(), Logs: logs})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			if got := getText(ctx, t, srv.URL+path, s.token); got != want {
				t.Errorf("api-server %d serves the log %q, want %q", i+1, got, want)
			}
		}
		out, errOut, code := weirIn(t, append(s.env, "WEIR__LOGGING__LOG_STORE=database"), "", "tasks", "logs", "ship", "r1", "talk")
		if code != 0 || out != want {
			t.Errorf("weir tasks logs: exit %d, %q %s; want %q", code, out, errOut, want)
		}
	})
}

// getText GETs url as text/plain with a bearer token and returns the body.
func getText(ctx context.Context, t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}
