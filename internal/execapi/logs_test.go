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

	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/tasklog"
)

// claimedTry starts an Execution API with a run of twoTaskDAG and returns
// the claimed and started (running) try of task a.
func claimedTry(t *testing.T) (*execapitest.Env, execclient.Workload) {
	t.Helper()
	env := execapitest.New(t, execapi.Config{})
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
