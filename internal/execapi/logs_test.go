package execapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/tasklog"
)

// claimedTry starts an Execution API with a run of twoTaskDAG and returns
// the claimed and started (running) try of task a.
func claimedTry(t *testing.T) (*execapitest.Env, execclient.Workload) {
	t.Helper()
	return claimedTryWith(t, execapi.Config{})
}

// claimedTryWith is claimedTry with the Execution API's configuration.
func claimedTryWith(t *testing.T, cfg execapi.Config) (*execapitest.Env, execclient.Workload) {
	t.Helper()
	env := execapitest.New(t, cfg)
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	a := claimAll(t, env, 2)["a"]
	if _, err := taskClient(env, a).Run(context.Background(), a.TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	return env, a
}

// readLog returns the try's log as the api-server stored it.
func readLog(t *testing.T, env *execapitest.Env, wl execclient.Workload) string {
	t.Helper()
	got, _, err := tasklog.Read(env.LogDir, tasklog.KeyOf(&wl.TI), 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// A chunk carries its byte offset: the next chunk appends, a repeated one
// is ignored, a partly stored one appends the rest, and a gap or a bad
// offset is refused with nothing changed.
func TestLogsAppendByOffset(t *testing.T) {
	t.Parallel()
	env, a := claimedTry(t)
	ctx := context.Background()
	c := taskClient(env, a)
	for _, step := range []struct {
		offset int64
		chunk  string
		next   int64
	}{
		{0, "line 1\n", 7},
		{7, "line 2\n", 14},
		{7, "line 2\n", 14},         // sent again after a lost answer: ignored
		{7, "line 2\nline 3\n", 21}, // partly stored: only line 3
	} {
		next, err := c.AppendLog(ctx, a.TI.ID, step.offset, []byte(step.chunk))
		if err != nil || next != step.next {
			t.Fatalf("AppendLog(%d, %q) = %d, %v; want %d", step.offset, step.chunk, next, err, step.next)
		}
	}
	_, err := c.AppendLog(ctx, a.TI.ID, 30, []byte("line 5\n"))
	status(t, err, 409, "starts at byte 30, but the log has 21 bytes: send the log from byte 21")
	if want, ok := execclient.LogGap(err); !ok || want != 21 {
		t.Fatalf("LogGap(%v) = %d, %t; want 21", err, want, ok)
	}
	if got := readLog(t, env, a); got != "line 1\nline 2\nline 3\n" {
		t.Fatalf("log = %q, want each line once", got)
	}
	_, err = c.AppendLog(ctx, a.TI.ID, -1, []byte("x"))
	status(t, err, 400, "offset must be")
	_, err = c.AppendLog(ctx, a.TI.ID+"-other", 0, []byte("x"))
	status(t, err, 403, "does not match")
	if got := readLog(t, env, a); got != "line 1\nline 2\nline 3\n" {
		t.Fatalf("log after refusals = %q", got)
	}
}

// dropFirstLogAnswer lets the first POST .../logs reach the server, then
// loses its answer, as a proxy or a broken connection would.
type dropFirstLogAnswer struct {
	next    http.RoundTripper
	dropped atomic.Bool
}

func (d *dropFirstLogAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/logs") && d.dropped.CompareAndSwap(false, true) {
		_ = resp.Body.Close()
		return nil, errors.New("connection reset after the request was sent")
	}
	return resp, err
}

// The client retries a chunk whose answer was lost after the server had
// appended it: the log still has each line once.
func TestLogsLostAnswerIsNotDuplicated(t *testing.T) {
	t.Parallel()
	env, a := claimedTry(t)
	ctx := context.Background()
	drop := &dropFirstLogAnswer{next: http.DefaultTransport}
	c := execclient.NewClient(env.URL, a.Token, execclient.ClientOptions{
		HTTPClient: &http.Client{Transport: drop}, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	var off int64
	for _, chunk := range []string{"line 1\n", "line 2\n"} {
		next, err := c.AppendLog(ctx, a.TI.ID, off, []byte(chunk))
		if err != nil {
			t.Fatal(err)
		}
		off = next
	}
	if !drop.dropped.Load() {
		t.Fatal("no answer was dropped")
	}
	if got := readLog(t, env, a); got != "line 1\nline 2\n" {
		t.Fatalf("log = %q, want each line once", got)
	}
}

// Several api-servers share the log folder, and one restarts: the log's
// length on disk is the only state, so a chunk sent again to another
// server, or to the restarted one, is still stored once.
func TestLogsAcrossAPIServersAndRestart(t *testing.T) {
	t.Parallel()
	env, a := claimedTry(t)
	ctx := context.Background()
	another := func() (*httptest.Server, *execclient.Client) {
		srv := httptest.NewServer(execapi.NewHandler(execapi.Deps{Store: env.Store, Tokens: env.Tokens, Clock: env.Clock, LogFolder: env.LogDir}))
		t.Cleanup(srv.Close)
		return srv, execclient.NewClient(srv.URL+"/execution", a.Token, execclient.ClientOptions{Retries: -1})
	}
	first := taskClient(env, a)
	srv2, second := another()
	send := func(c *execclient.Client, off int64, chunk string) int64 {
		t.Helper()
		next, err := c.AppendLog(ctx, a.TI.ID, off, []byte(chunk))
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	off := send(first, 0, "line 1\n")
	send(second, 0, "line 1\n") // the same chunk through another api-server
	off = send(second, off, "line 2\n")
	srv2.Close() // "restart": a new api-server process over the same folder
	_, third := another()
	send(third, 7, "line 2\n")
	send(third, off, "line 3\n")
	if got := readLog(t, env, a); got != "line 1\nline 2\nline 3\n" {
		t.Fatalf("log = %q, want each line once", got)
	}
}

// A final state report may carry the end of the try's log: it is stored
// before the try ends (the answer says the log's new length). A malformed
// tail, a tail with a deferral, or a tail that starts past the stored end
// (a folder not shared between api-servers: 409 log_gap, for the worker to
// ship it with POST .../logs) is refused with the try still running and its
// log unchanged.
func TestStateReportCarriesTheLogsEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("stored before the end", func(t *testing.T) {
		t.Parallel()
		env, a := claimedTryWith(t, execapi.Config{MaxLogChunk: 64})
		c := taskClient(env, a)
		if _, err := c.AppendLog(ctx, a.TI.ID, 0, []byte("line 1\n")); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []struct {
			state  core.TIState
			tail   execclient.LogTail
			status int
			detail string
		}{
			{core.TISuccess, execclient.LogTail{Offset: -1, Data: []byte("x\n")}, 400, "log.offset must be"},
			{core.TISuccess, execclient.LogTail{Offset: 7, Data: []byte(strings.Repeat("x", 65))}, 413, "log tail exceeds 64 bytes"},
			{core.TIDeferred, execclient.LogTail{Offset: 7, Data: []byte("x\n")}, 400, "a deferral carries no log"},
		} {
			_, err := c.Finish(ctx, a.TI.ID, execclient.StateRequest{State: bad.state, Log: &bad.tail})
			status(t, err, bad.status, bad.detail)
		}
		if ti := env.TI(t, a.TI.ID); ti.State != core.TIRunning || readLog(t, env, a) != "line 1\n" {
			t.Fatalf("after refused reports: %s, log %q; want running with the log as it was", ti.State, readLog(t, env, a))
		}
		sr, err := c.Finish(ctx, a.TI.ID, execclient.StateRequest{State: core.TISuccess, Log: &execclient.LogTail{Offset: 7, Data: []byte("line 2\n\xff\n")}})
		if err != nil || sr.State != core.TISuccess || sr.LogNextOffset == nil || *sr.LogNextOffset != 16 {
			t.Fatalf("Finish = %+v, %v; want success with the log 16 bytes long", sr, err)
		}
		if got := readLog(t, env, a); got != "line 1\nline 2\n\xff\n" {
			t.Fatalf("log = %q", got)
		}
	})
	t.Run("past the stored end", func(t *testing.T) {
		t.Parallel()
		env, a := claimedTry(t)
		c := taskClient(env, a)
		for range 2 { // sent again, as after a lost answer: refused alike, nothing stored
			_, err := c.Finish(ctx, a.TI.ID, execclient.StateRequest{State: core.TIFailed, Log: &execclient.LogTail{Offset: 40, Data: []byte("the end\n")}})
			if want, ok := execclient.LogGap(err); !ok || want != 0 {
				t.Fatalf("Finish past the end: %v; want 409 log_gap expecting offset 0", err)
			}
		}
		if ti := env.TI(t, a.TI.ID); ti.State != core.TIRunning {
			t.Fatalf("try is %s after a refused report; want running", ti.State)
		}
		if b, _, _ := tasklog.Read(env.LogDir, tasklog.KeyOf(&a.TI), 0); len(b) > 0 {
			t.Fatalf("a refused tail was stored: %q", b)
		}
	})
}
