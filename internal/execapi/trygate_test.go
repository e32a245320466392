package execapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// Once a try has finished, its token grants nothing: no log lines, no XCom
// or connection reads, no state, no heartbeat, and it is never refreshed,
// even near expiry (issue 13, finding 3: a finished try's token could still
// append to its log, read its run's XCom and be renewed again and again).
func TestFinishedTryTokenGrantsNothing(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	if err := env.Store.ConnectionUpsert(ctx, &core.Connection{ID: "warehouse", URI: "postgres://u:pw@db/dw"}); err != nil {
		t.Fatal(err)
	}
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	a := claimAll(t, env, 2)["a"]
	ca := taskClient(env, a)
	if _, err := ca.Run(ctx, a.TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := ca.XComPush(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.AppendLog(ctx, a.TI.ID, 0, []byte("line 1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.SetState(ctx, a.TI.ID, core.TISuccess); err != nil {
		t.Fatal(err)
	}

	_, err := ca.AppendLog(ctx, a.TI.ID, 7, []byte("late line\n"))
	status(t, err, 403, "not running (it is success)")
	_, err = ca.XComPull(ctx, "a", "k", core.NoMapIndex)
	status(t, err, 403, "not running")
	_, err = ca.ConnectionURI(ctx, "warehouse")
	status(t, err, 403, "not running")
	_, err = ca.StateGet(ctx, ca.TaskScope(), "k")
	status(t, err, 403, "not running")
	_, err = ca.TaskAssets(ctx)
	status(t, err, 403, "not running")
	status(t, ca.Heartbeat(ctx, a.TI.ID, execclient.HeartbeatRequest{}), 409, "not running")
	_, err = ca.Run(ctx, a.TI.ID, execclient.RunRequest{})
	status(t, err, 409, "not running")

	// Near expiry: refused, and no response carries a fresh token.
	env.Clock.Advance(9*time.Minute + 30*time.Second)
	for _, rq := range []struct{ method, path, body string }{
		{http.MethodPost, "/task-instances/" + a.TI.ID + "/logs?offset=7", "x\n"},
		{http.MethodGet, "/xcoms/d/r1/a/k", ""},
		{http.MethodPut, "/task-instances/" + a.TI.ID + "/heartbeat", "{}"},
		{http.MethodGet, "/connections/warehouse", ""},
	} {
		req, _ := http.NewRequest(rq.method, env.URL+rq.path, strings.NewReader(rq.body))
		req.Header.Set("Authorization", "Bearer "+a.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != 403 && resp.StatusCode != 409 {
			t.Errorf("%s %s: %d, want 403 or 409", rq.method, rq.path, resp.StatusCode)
		}
		if h := resp.Header.Get(execclient.RefreshedTokenHeader); h != "" {
			t.Errorf("%s %s: a finished try's token was refreshed", rq.method, rq.path)
		}
	}
	if got := readLog(t, env, a); got != "line 1\n" {
		t.Fatalf("log = %q, want only the line sent while running", got)
	}
}

// A try someone else ended while it ran keeps its log open to its token
// for store.LateLogGrace: marked failed, or cleared (its row archived).
// The worker, which learns of it at its next heartbeat, ships the lines
// written until it stopped the task and says why it stopped. Nothing else
// is granted, the token is not refreshed, and after the grace the log is
// closed.
func TestStoppedTryShipsItsLastLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, refused string
		end           func(ctx context.Context, st store.Store, id string, now time.Time) error
	}{
		{"marked", "not running", func(ctx context.Context, st store.Store, id string, now time.Time) error {
			_, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{id}, To: core.TIFailed, Now: now})
			return err // service.MarkTaskInstance's statement
		}},
		{"cleared", "no longer current", func(ctx context.Context, st store.Store, id string, now time.Time) error {
			return st.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{ID: id, NewID: "cleared-next", To: core.TINone, Now: now})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := execapitest.New(t, execapi.Config{})
			ctx := context.Background()
			env.SeedRun(t, twoTaskDAG("d"), "r1", "")
			a := claimAll(t, env, 2)["a"]
			ca := taskClient(env, a)
			if _, err := ca.Run(ctx, a.TI.ID, execclient.RunRequest{}); err != nil {
				t.Fatal(err)
			}
			if _, err := ca.AppendLog(ctx, a.TI.ID, 0, []byte("working\n")); err != nil {
				t.Fatal(err)
			}
			if err := c.end(ctx, env.Store, a.TI.ID, env.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			status(t, ca.Heartbeat(ctx, a.TI.ID, execclient.HeartbeatRequest{}), 409, c.refused)
			if _, err := ca.AppendLog(ctx, a.TI.ID, 8, []byte("still working\nweir: the server stopped the try\n")); err != nil {
				t.Fatalf("the stopped try's last lines: %v", err)
			}
			_, err := ca.XComPull(ctx, "a", "k", core.NoMapIndex)
			status(t, err, 403, c.refused)
			env.Clock.Advance(store.LateLogGrace + time.Second)
			_, err = ca.AppendLog(ctx, a.TI.ID, 52, []byte("too late\n"))
			status(t, err, 403, c.refused)
			if got := readLog(t, env, a); got != "working\nstill working\nweir: the server stopped the try\n" {
				t.Errorf("log = %q, want the lines up to the stop", got)
			}
		})
	}
}

// A try replaced by a retry or clear (its row archived) is refused as no
// longer current, with the reason invalid_state.
func TestReplacedTryTokenGrantsNothing(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	a := claimAll(t, env, 2)["a"]
	gone := execclient.NewClient(env.URL, a.Token, execclient.ClientOptions{Retries: -1}).
		WithToken(mustIssue(t, env, "no-such-try"), execclient.TaskIdentity{TIID: "no-such-try", DagID: "d", RunID: "r1", TaskID: "a", MapIndex: -1})
	_, err := gone.XComPull(ctx, "a", "k", core.NoMapIndex)
	status(t, err, 403, "no longer current")
	status(t, gone.Heartbeat(ctx, "no-such-try", execclient.HeartbeatRequest{}), 409, "no longer current")
}

func mustIssue(t *testing.T, env *execapitest.Env, tiID string) string {
	t.Helper()
	tok, err := env.Tokens.IssueExecution(tiID)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
