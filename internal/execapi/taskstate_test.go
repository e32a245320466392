package execapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

// stateEnv is an Execution API whose task state is configured by cfg, over
// execapitest's store, tokens and clock.
type stateEnv struct {
	*execapitest.Env
	url string
}

func newStateEnv(t *testing.T, cfg statestore.Config) *stateEnv {
	t.Helper()
	return newStateEnvOn(t, execapitest.New(t, execapi.Config{}), cfg)
}

// newStateEnvOn is newStateEnv over env's store.
func newStateEnvOn(t *testing.T, env *execapitest.Env, cfg statestore.Config) *stateEnv {
	t.Helper()
	h := execapi.NewHandler(execapi.Deps{Store: env.Store, Tokens: env.Tokens, Clock: env.Clock,
		State: statestore.New(env.Store, env.Clock, cfg)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &stateEnv{Env: env, url: srv.URL + "/execution"}
}

// running claims d's task instances in run runID, starts them, and returns
// a client per task.
func (e *stateEnv) running(t *testing.T, runID string) map[string]*execclient.Client {
	t.Helper()
	e.SeedRun(t, twoTaskDAG("d"), runID, "")
	out := map[string]*execclient.Client{}
	for task, wl := range claimAll(t, e.Env, 2) {
		out[task] = e.client(t, wl)
	}
	return out
}

// client returns a client for wl's try on e's server, after starting it.
func (e *stateEnv) client(t *testing.T, wl execclient.Workload) *execclient.Client {
	t.Helper()
	c := execclient.NewClient(e.url, wl.Token, execclient.ClientOptions{Retries: -1}).WithToken(wl.Token, execclient.TaskIdentity{
		TIID: wl.TI.ID, DagID: wl.TI.DagID, RunID: wl.TI.RunID, TaskID: wl.TI.TaskID, MapIndex: wl.TI.MapIndex})
	if _, err := c.Run(context.Background(), wl.TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// ownTask is a try's own task state: the token names the instance.
var ownTask = core.StateScope{Kind: core.StateTask}

// rows returns every task-state row of dag d as "run/task/key=value".
func (e *stateEnv) rows(t *testing.T) []string {
	t.Helper()
	all, err := e.Store.StateList(context.Background(), &store.StateListParams{Kind: core.StateTask, DagID: "d"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range all {
		out = append(out, r.Scope.RunID+"/"+r.Scope.TaskID+"/"+r.Key+"="+string(r.Value))
	}
	return out
}

// docs/requirements.md#ts-1, #ts-2, #ts-3, #ts-6 over HTTP: values round-trip with their types,
// the server computes expires_at with its clock, a missing key is 404 with a
// message naming it, delete is a no-op when absent, clear empties the scope.
func TestTaskStateRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{DefaultRetentionDays: 30})
	a := e.running(t, "r1")["a"]

	if err := a.StateSet(ctx, ownTask, "last_page", json.RawMessage(`41`), "6h"); err != nil {
		t.Fatal(err)
	}
	if err := a.StateSet(ctx, ownTask, "job", json.RawMessage(`{"id": "j-1", "n": [1, 2.5]}`), "never"); err != nil {
		t.Fatal(err)
	}
	got, err := a.StateEntry(ctx, ownTask, "last_page")
	if err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now()
	if string(got.Value) != "41" || got.UpdatedBy != (core.StateWriter{Kind: "task", DagID: "d", RunID: "r1", TaskID: "a", MapIndex: -1, TryNumber: 1}) ||
		got.Scope != core.TaskScope("d", "r1", "a", -1) || !got.UpdatedAt.Equal(now) ||
		got.ExpiresAt == nil || !got.ExpiresAt.Equal(now.Add(6*time.Hour)) || got.NeverExpire {
		t.Errorf("last_page = %+v, want 41 written by r1 try 1, expiring 6h after the server's now", got)
	}
	if job, err := a.StateEntry(ctx, ownTask, "job"); err != nil || string(job.Value) != `{"id":"j-1","n":[1,2.5]}` ||
		job.ExpiresAt != nil || !job.NeverExpire {
		t.Errorf("job = %+v, %v", job, err)
	}
	_, err = a.StateGet(ctx, ownTask, "absent")
	status(t, err, 404, `no task state key "absent" for task instance d/r1/a`)

	if err := a.StateDelete(ctx, ownTask, "absent"); err != nil {
		t.Errorf("delete of an absent key: %v", err)
	}
	if err := a.StateDelete(ctx, ownTask, "job"); err != nil {
		t.Fatal(err)
	}
	if err := a.StateClear(ctx, ownTask, true); err != nil {
		t.Fatal(err)
	}
	if rows := e.rows(t); len(rows) != 0 {
		t.Errorf("after delete and clear: %v", rows)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.url+"/store/ti/"+a.Identity.TIID+"?all_map_indices=maybe", nil)
	req.Header.Set("Authorization", "Bearer "+a.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "all_map_indices must be true or false") {
		t.Errorf("bad all_map_indices: %d %s", resp.StatusCode, body)
	}
}

// docs/requirements.md#ts-1: a retry is a new try with a new id and token, and it reads what
// the failed try wrote.
func TestTaskStateSharedByRetries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{})
	b := e.running(t, "r1")["b"] // b has retries
	if err := b.StateSet(ctx, ownTask, "checkpoint", json.RawMessage(`70`), ""); err != nil {
		t.Fatal(err)
	}
	if sr, err := b.SetState(ctx, b.Identity.TIID, core.TIFailed); err != nil || sr.State != core.TIUpForRetry {
		t.Fatalf("fail try 1: %+v, %v", sr, err)
	}
	// What the scheduler does when the retry is due.
	next := uuid.NewString()
	if err := e.Store.TaskInstanceNewTry(ctx, &store.TaskInstanceNewTryParams{ID: b.Identity.TIID, NewID: next,
		To: core.TIQueued, Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Notify(ctx, store.ChannelQueued); err != nil {
		t.Fatal(err)
	}
	retry := e.client(t, claimAll(t, e.Env, 1)["b"])
	if retry.Identity.TIID != next {
		t.Fatalf("claimed %s, want the retry %s", retry.Identity.TIID, next)
	}
	v, err := retry.StateGet(ctx, ownTask, "checkpoint")
	if err != nil || string(v) != "70" {
		t.Fatalf("try 2 reads checkpoint = %s, %v; want 70 written by try 1", v, err)
	}
	// The old try's token no longer reaches the state.
	status(t, b.StateSet(ctx, ownTask, "checkpoint", json.RawMessage(`0`), ""), 403, "no longer current")
	if err := retry.StateSet(ctx, ownTask, "checkpoint", json.RawMessage(`100`), ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := retry.StateEntry(ctx, ownTask, "checkpoint"); got.UpdatedBy.TryNumber != 2 {
		t.Errorf("last_updated_by try_number = %d after try 2 wrote, want 2", got.UpdatedBy.TryNumber)
	}
}

// docs/requirements.md#ts-4: with clear_on_success a success deletes the try's task state;
// a failure keeps it.
func TestTaskStateClearOnSuccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{ClearOnSuccess: true})
	cs := e.running(t, "r1")
	for _, c := range cs {
		if err := c.StateSet(ctx, ownTask, "k", json.RawMessage(`1`), ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs["a"].SetState(ctx, cs["a"].Identity.TIID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if _, err := cs["b"].SetState(ctx, cs["b"].Identity.TIID, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	if rows := e.rows(t); len(rows) != 1 || rows[0] != "r1/b/k=1" {
		t.Errorf("after a succeeded and b failed: %v, want only b's key", rows)
	}
}

// docs/requirements.md#sec-2, #sec-3, #ts-7, #ts-3: every refused request gets the right status
// and a message naming the problem, and leaves the table as it was.
func TestTaskStateRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newStateEnv(t, statestore.Config{MaxValueBytes: 32})
	cs := e.running(t, "r1")
	a, b := cs["a"], cs["b"]
	if err := a.StateSet(ctx, ownTask, "k", json.RawMessage(`"original"`), ""); err != nil {
		t.Fatal(err)
	}
	want := []string{`r1/a/k="original"`}
	unchanged := func(what string) {
		t.Helper()
		if got := e.rows(t); len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s changed the table: %v", what, got)
		}
	}

	// Another try's token: the path names a, the token is b's.
	other := b.WithToken(b.Token(), a.Identity)
	status(t, other.StateSet(ctx, ownTask, "k", json.RawMessage(`1`), ""), 403, "token subject does not match")
	_, err := other.StateGet(ctx, ownTask, "k")
	status(t, err, 403, "token subject does not match")
	status(t, other.StateClear(ctx, ownTask, false), 403, "token subject does not match")
	unchanged("another try's token")

	// Forged and expired tokens.
	forger, _ := auth.NewTokens(auth.Config{Key: []byte(strings.Repeat("f", 40))}, e.Clock)
	forged, _ := forger.IssueExecution(a.Identity.TIID)
	old, _ := auth.NewTokens(auth.Config{Key: execapitest.Key}, clocktest.New(e.Clock.Now().Add(-time.Hour)))
	expired, _ := old.IssueExecution(a.Identity.TIID)
	for name, tok := range map[string]string{"forged": forged, "expired": expired} {
		status(t, a.WithToken(tok, a.Identity).StateSet(ctx, ownTask, "k", json.RawMessage(`1`), ""), 401, "token")
		status(t, a.WithToken(tok, a.Identity).StateDelete(ctx, ownTask, "k"), 401, "token")
		unchanged(name + " token")
	}

	// Bad values and retentions: 400; oversized: 413 naming the limit.
	for body, detail := range map[string]string{
		`{"value": NaN}`:                               "NaN or Infinity",
		`{"value": [1, -Infinity]}`:                    "NaN or Infinity",
		`{"value": 1e999}`:                             "out of range",
		`{"value": null}`:                              "null cannot be stored",
		`{}`:                                           "a value is required",
		`{"value": 1, "retention": 7}`:                 "retention must be a string",
		`{"value": 1, "retention": "7"}`:               "is not a duration: use a unit",
		`{"value": 1, "retention": "-1h"}`:             "positive duration",
		`{"value": 1, "ttl": "1h"}`:                    "unknown field",
		`{"value": "` + strings.Repeat("x", 40) + `"}`: "42 bytes, over the limit of 32 bytes ([state_store] max_value_bytes)",
	} {
		code := 400
		if strings.Contains(detail, "max_value_bytes") {
			code = 413
		}
		resp := put(t, e.url+"/store/ti/"+a.Identity.TIID+"/k", a.Token(), body)
		if resp.status != code || !strings.Contains(resp.body, detail) {
			t.Errorf("PUT %s: %d %s; want %d with %q", body, resp.status, resp.body, code, detail)
		}
		unchanged("PUT " + body)
	}
	if resp := put(t, e.url+"/store/ti/"+a.Identity.TIID+"/k", a.Token(), `{"value": "`+strings.Repeat("y", 100<<10)+`"}`); resp.status != 413 ||
		!strings.Contains(resp.body, "over the limit of 32 bytes") {
		t.Errorf("a body over the limit: %d %s", resp.status, resp.body)
	}
	unchanged("an oversized body")
	if resp := put(t, e.url+"/store/ti/"+a.Identity.TIID+"/"+strings.Repeat("k", 513), a.Token(), `{"value": 1}`); resp.status != 400 ||
		!strings.Contains(resp.body, "513 characters long, the limit is 512") {
		t.Errorf("a key over the limit: %d %s", resp.status, resp.body)
	}
	if err := a.StateSet(ctx, ownTask, strings.Repeat("k", 513), json.RawMessage(`1`), ""); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("the client sent a key over the limit: %v", err)
	}

	// A finished try's token: refused, nothing changes.
	if _, err := a.SetState(ctx, a.Identity.TIID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	status(t, a.StateSet(ctx, ownTask, "k", json.RawMessage(`2`), ""), 403, "not running")
	status(t, a.StateDelete(ctx, ownTask, "k"), 403, "not running")
	status(t, a.StateClear(ctx, ownTask, true), 403, "not running")
	_, err = a.StateGet(ctx, ownTask, "k")
	status(t, err, 403, "not running")
	unchanged("a finished try's token")
}

type answer struct {
	status int
	body   string
}

// put sends a raw PUT with a bearer token.
func put(t *testing.T, url, token, body string) answer {
	t.Helper()
	return send(t, http.MethodPut, url, token, body)
}

// send sends a raw request with a bearer token.
func send(t *testing.T, method, url, token, body string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b)}
}
