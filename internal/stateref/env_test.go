package stateref_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateobj"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

// maxValueBytes is the test server's [state_store] max_value_bytes: small,
// so a value of a few KB is over it and only a reference fits.
const maxValueBytes = 256

// env is a real Execution API on SQLite with a small value limit.
type env struct {
	*execapitest.Env
	url    string
	states *statestore.Service // the server's state service
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := execapitest.New(t, execapi.Config{})
	states := statestore.New(e.Store, e.Clock, statestore.Config{MaxValueBytes: maxValueBytes, DefaultRetentionDays: 30})
	h := execapi.NewHandler(execapi.Deps{Store: e.Store, Tokens: e.Tokens, Clock: e.Clock, State: states})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{Env: e, url: srv.URL + "/execution", states: states}
}

// sweep runs one sweep of st as a worker does and returns how many
// references it reported deleted.
func (e *env) sweep(t *testing.T, st objstore.Store) (int, error) {
	t.Helper()
	tok, err := e.Tokens.IssueWorker("sweeper", 0)
	if err != nil {
		t.Fatal(err)
	}
	sw := &stateref.Sweeper{Client: execclient.NewClient(e.url, tok, execclient.ClientOptions{Retries: -1}), Store: st,
		Logger: slog.New(slog.DiscardHandler)}
	return sw.SweepOnce(context.Background())
}

// mustSweep is sweep that fails the test on an error.
func (e *env) mustSweep(t *testing.T, st objstore.Store) int {
	t.Helper()
	n, err := e.sweep(t, st)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return n
}

// refIn returns the object reference a stored row value holds, or fails.
func refIn(t *testing.T, value string) string {
	t.Helper()
	ref, ok := stateobj.Decode(json.RawMessage(value))
	if !ok {
		t.Fatalf("row value %.80s is not a reference", value)
	}
	return ref
}

// mappedRun creates run runID of dag d with task t mapped over n indices,
// claims and starts every instance, and returns a client per map index.
func (e *env) mappedRun(t *testing.T, runID string, n int) []*execclient.Client {
	t.Helper()
	return e.startRun(t, core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}, runID, n)
}

// startRun syncs dag (its one task "t" and its assets, which become
// active), creates run runID with t mapped over n indices, claims and
// starts every instance, and returns a client per map index.
func (e *env) startRun(t *testing.T, dag core.DAG, runID string, n int) []*execclient.Client {
	t.Helper()
	ctx := context.Background()
	vid, _, err := e.Store.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: dag.DagID + "-1", Now: e.Clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	var tis []store.NewTaskInstance
	for i := range n {
		tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: "t", MapIndex: i, MaxTries: 1,
			Operator: "noop", State: core.TIQueued, PriorityWeight: 1})
	}
	if _, err := e.Store.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: dag.DagID, RunID: runID, RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: vid, Now: e.Clock.Now(), TaskInstances: tis}); err != nil {
		t.Fatal(err)
	}
	wls, err := e.WorkerClient(t, "w1").Claim(ctx, execclient.ClaimRequest{Limit: n, WaitSeconds: 5})
	if err != nil || len(wls) != n {
		t.Fatalf("claimed %d workloads (%v), want %d", len(wls), err, n)
	}
	out := make([]*execclient.Client, n)
	for _, wl := range wls {
		c := execclient.NewClient(e.url, wl.Token, execclient.ClientOptions{Retries: -1}).WithToken(wl.Token, execclient.TaskIdentity{
			TIID: wl.TI.ID, DagID: wl.TI.DagID, RunID: wl.TI.RunID, TaskID: wl.TI.TaskID, MapIndex: wl.TI.MapIndex, TryNumber: 1})
		if _, err := c.Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
		out[wl.TI.MapIndex] = c
	}
	return out
}

// rows returns dag d's task-state rows as "run/task/map_index/key" → the
// stored value, as the database holds them.
func (e *env) rows(t *testing.T) map[string]string {
	t.Helper()
	all, err := e.Store.StateList(context.Background(), &store.StateListParams{Kind: core.StateTask, DagID: "d"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range all {
		out[fmt.Sprintf("%s/%s/%d/%s", r.Scope.RunID, r.Scope.TaskID, r.Scope.MapIndex, r.Key)] = string(r.Value)
	}
	return out
}

// backend is a store under test with a name for subtests.
type backend struct {
	name string
	url  func(t *testing.T) string
}

// backends are the two kinds of [workers] state_backend: a real directory
// and a real SeaweedFS bucket (skipped without a weed binary unless
// WEIR_REQUIRE_S3=1).
var backends = []backend{
	{"file", func(t *testing.T) string { return "file://" + filepath.Join(t.TempDir(), "state") }},
	{"s3", func(t *testing.T) string { return s3test.URL(t, "weir/") }},
}

// openStore opens url as the worker does.
func openStore(t *testing.T, url string) objstore.Store {
	t.Helper()
	st, err := objstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// list returns every object key in st under prefix.
func list(t *testing.T, st objstore.Store, prefix string) []string {
	t.Helper()
	keys, err := st.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// blockDeletes makes dir refuse to lose entries, so deleting an object in
// it fails: read-only for an ordinary user; immutable (chattr +i) for root,
// whom permissions do not stop. It returns the function that lifts the
// block (also run at cleanup).
func blockDeletes(t *testing.T, dir string) (unblock func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		unblock = func() { _ = os.Chmod(dir, 0o700) }
	} else {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot make %s immutable as root to make a delete fail (chattr: %v %s)", dir, err, out)
		}
		unblock = func() { _ = exec.Command("chattr", "-i", dir).Run() }
	}
	t.Cleanup(unblock)
	return unblock
}
