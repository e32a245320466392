package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/logstore"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

// With [logging] log_store = database, a try's log shipped in chunks to
// two api-servers (the worker moving to the other one after a lost answer,
// as across an outage), its end riding the final state report (stored in
// the transaction that ends the try; a tail past the end is refused with
// the try left running), reads whole from the REST API of two api-servers
// that share nothing but the database (each its own, empty, log folder)
// and from the CLI, on SQLite and PostgreSQL.
func TestTaskLogsInTheDatabase(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		logs, _, err := logstore.Open(logstore.Options{Database: true, Folder: t.TempDir()}, s.st, nil)
		if err != nil {
			t.Fatal(err)
		}
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
		_, err = via(second).Finish(ctx, wl.TI.ID, execclient.StateRequest{State: core.TISuccess,
			Log: &execclient.LogTail{Offset: 40, Data: []byte("lost\n")}})
		if next, ok := execclient.LogGap(err); !ok || next != 21 || first.TI(t, wl.TI.ID).State != core.TIRunning {
			t.Errorf("a report whose tail starts past the end: %v, want a log gap naming byte 21 and the try running", err)
		}
		sr, err := via(second).Finish(ctx, wl.TI.ID, execclient.StateRequest{State: core.TISuccess,
			Log: &execclient.LogTail{Offset: 14, Data: []byte("line 3\nline 4\n")}})
		if err != nil || sr.State != core.TISuccess || sr.LogNextOffset == nil || *sr.LogNextOffset != 28 {
			t.Fatalf("the final report with the log's end = %+v, %v; want success and 28 bytes", sr, err)
		}
		const want = "line 1\nline 2\nline 3\nline 4\n"
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

// With [logging] remote_base_log_folder (a SeaweedFS bucket, or a shared
// folder), a try's log shipped to one api-server reads live from another
// that shares only the database and the remote store; once the try has
// ended and the scheduler's uploader has stored it, it reads complete from
// both api-servers' REST API and from `weir tasks logs`, on SQLite and
// PostgreSQL.
func TestRemoteTaskLogs(t *testing.T) {
	t.Parallel()
	for name, remote := range map[string]func(t *testing.T) string{
		"s3":     func(t *testing.T) string { return s3test.URL(t, "weir/logs") },
		"folder": func(t *testing.T) string { return filepath.Join(t.TempDir(), "shared-logs") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			onEachEngine(t, func(t *testing.T, s *surfaces) {
				ctx := t.Context()
				url := remote(t)
				open := func() (tasklog.Logs, *logstore.Remote) {
					logs, r, err := logstore.Open(logstore.Options{Database: true, Folder: t.TempDir(), Remote: url}, s.st, nil)
					if err != nil {
						t.Fatal(err)
					}
					return logs, r
				}
				firstLogs, remoteStore := open()
				secondLogs, _ := open()
				first := execapitest.NewWithLogs(t, s.st, execapi.Config{}, firstLogs)
				first.SeedRun(t, core.DAG{DagID: "ship", Tasks: []core.Task{{TaskID: "talk", Operator: "noop"}}}, "r1", "")
				wls, err := first.WorkerClient(t, "w1").Claim(ctx, execclient.ClaimRequest{Limit: 1, WaitSeconds: 5})
				if err != nil || len(wls) != 1 {
					t.Fatalf("claim: %v, %d workloads", err, len(wls))
				}
				wl := wls[0]
				c := execclient.NewClient(first.URL, wl.Token, execclient.ClientOptions{Retries: -1}).WithToken(wl.Token,
					execclient.TaskIdentity{TIID: wl.TI.ID, DagID: wl.TI.DagID, RunID: wl.TI.RunID, TaskID: wl.TI.TaskID, MapIndex: wl.TI.MapIndex})
				if _, err := c.Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
					t.Fatal(err)
				}
				if _, err := c.AppendLog(ctx, wl.TI.ID, 0, []byte("line 1\n")); err != nil {
					t.Fatal(err)
				}
				path := fmt.Sprintf("/api/v2/dags/ship/dagRuns/r1/taskInstances/talk/logs/%d", wl.TI.TryNumber)
				servers := make([]string, 2)
				for i, logs := range []tasklog.Logs{firstLogs, secondLogs} {
					h, err := api.NewHandler(api.Config{Store: s.st, SecretKey: []byte("0123456789abcdef0123"), LogFolder: t.TempDir(), Logs: logs})
					if err != nil {
						t.Fatal(err)
					}
					srv := httptest.NewServer(h)
					t.Cleanup(srv.Close)
					servers[i] = srv.URL
				}
				if got := getText(ctx, t, servers[1]+path, s.token); got != "line 1\n" {
					t.Errorf("the other api-server serves the running try's log %q, want line 1", got)
				}
				// The end rides the final report, in the transaction that ends the try.
				if _, err := c.Finish(ctx, wl.TI.ID, execclient.StateRequest{State: core.TISuccess,
					Log: &execclient.LogTail{Offset: 7, Data: []byte("line 2\n")}}); err != nil {
					t.Fatal(err)
				}
				up := &logstore.Uploader{Remote: remoteStore}
				if n, err := up.UploadOnce(ctx); err != nil || n != 1 {
					t.Fatalf("the scheduler's uploader stored %d logs (%v), want the ended try's", n, err)
				}
				const want = "line 1\nline 2\n"
				for i, u := range servers {
					if got := getText(ctx, t, u+path, s.token); got != want {
						t.Errorf("api-server %d serves the uploaded log %q, want %q", i+1, got, want)
					}
				}
				env := append(s.env, "WEIR__LOGGING__LOG_STORE=database", "WEIR__LOGGING__REMOTE_BASE_LOG_FOLDER="+url)
				out, errOut, code := weirIn(t, env, "", "tasks", "logs", "ship", "r1", "talk")
				if code != 0 || out != want {
					t.Errorf("weir tasks logs: exit %d, %q %s; want %q", code, out, errOut, want)
				}
			})
		})
	}
}

// Behind two api-servers with log_store = folder and folders not shared,
// the log route of the server without the file answers 404 naming the
// other's folder and the settings that fix it (it used to answer 200 and
// an empty log), and so does `weir tasks logs` on a machine without the
// file; a try that wrote nothing still reads empty.
func TestUnsharedFolderLogSaysWhere(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		folderA := t.TempDir()
		logsA, _, err := logstore.Open(logstore.Options{Folder: folderA}, s.st, nil)
		if err != nil {
			t.Fatal(err)
		}
		logsB, _, err := logstore.Open(logstore.Options{Folder: t.TempDir()}, s.st, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := execapitest.NewWithLogs(t, s.st, execapi.Config{}, logsA)
		a.SeedRun(t, core.DAG{DagID: "ship", Tasks: []core.Task{{TaskID: "talk", Operator: "noop"}, {TaskID: "mute", Operator: "noop"}}}, "r1", "")
		wls, err := a.WorkerClient(t, "w1").Claim(ctx, execclient.ClaimRequest{Limit: 2, WaitSeconds: 5})
		if err != nil || len(wls) != 2 {
			t.Fatalf("claim: %v, %d workloads", err, len(wls))
		}
		for _, wl := range wls {
			c := execclient.NewClient(a.URL, wl.Token, execclient.ClientOptions{Retries: -1}).WithToken(wl.Token,
				execclient.TaskIdentity{TIID: wl.TI.ID, DagID: wl.TI.DagID, RunID: wl.TI.RunID, TaskID: wl.TI.TaskID, MapIndex: wl.TI.MapIndex})
			if _, err := c.Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
				t.Fatal(err)
			}
			if wl.TI.TaskID == "talk" {
				if _, err := c.AppendLog(ctx, wl.TI.ID, 0, []byte("on a only\n")); err != nil {
					t.Fatal(err)
				}
			}
		}
		h, err := api.NewHandler(api.Config{Store: s.st, SecretKey: []byte("0123456789abcdef0123"), LogFolder: t.TempDir(), Logs: logsB})
		if err != nil {
			t.Fatal(err)
		}
		b := httptest.NewServer(h)
		t.Cleanup(b.Close)
		if got := getText(ctx, t, b.URL+"/api/v2/dags/ship/dagRuns/r1/taskInstances/mute/logs/0", s.token); got != "" {
			t.Errorf("a try that wrote nothing reads %q, want empty", got)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.URL+"/api/v2/dags/ship/dagRuns/r1/taskInstances/talk/logs/0", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), folderA) || !strings.Contains(string(body), "log_store = database") {
			t.Errorf("the other api-server's log: %d %s; want 404 naming %s and the setting to fix", resp.StatusCode, body, folderA)
		}
		_, errOut, code := weirIn(t, s.env, "", "tasks", "logs", "ship", "r1", "talk")
		if code == 0 || !strings.Contains(errOut, folderA) {
			t.Errorf("weir tasks logs without the file: exit %d, %s; want an error naming %s", code, errOut, folderA)
		}
	})
}
