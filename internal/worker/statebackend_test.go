package worker

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateobj"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// With [workers] state_backend set, an in-process Go task's state of
// either kind goes through the backend: values over max_value_bytes are
// stored under their scope's reference (an asset written by uri under its
// name, read back by name), only the references reach the database, and a
// bash task is told the backend in WEIR_STATE_BACKEND
// (docs/state-backends.md).
func TestWorkerStateBackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := execapitest.New(t, execapi.Config{})
	dir := filepath.Join(t.TempDir(), "state")
	events := core.Asset{Name: "events", URI: "s3://lake/events"}
	big := strings.Repeat("x", statestore.DefaultMaxValueBytes+1)
	reg := operator.NewRegistry()
	_ = reg.Register("big", func(ctx context.Context, tc operator.TaskContext) (any, error) {
		v, _ := json.Marshal(big)
		n := 0
		for _, sc := range []struct{ write, read core.StateScope }{
			{core.StateScope{Kind: core.StateTask}, core.StateScope{Kind: core.StateTask}},
			{core.AssetScopeByURI(events.URI), core.AssetScopeByName(events.Name)},
		} {
			if err := tc.State().StateSet(ctx, sc.write, "big", v, ""); err != nil {
				return nil, err
			}
			got, err := tc.State().StateGet(ctx, sc.read, "big")
			if err != nil {
				return nil, err
			}
			n += len(got)
		}
		return n, nil
	})
	dag := core.DAG{DagID: "d", Assets: []core.Asset{events}, Tasks: []core.Task{
		{TaskID: "go", Operator: operator.Go, Args: map[string]any{"function": "big"}, Outlets: []core.AssetRef{{Name: events.Name}}},
		{TaskID: "sh", Operator: operator.Bash, Args: map[string]any{"bash_command": `echo "backend=$WEIR_STATE_BACKEND"`}},
	}}
	env.SeedRun(t, dag, "r1", "")
	if err := env.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, env, reg, func(w *Worker) { w.StateBackend, w.StateSweepInterval = "file://"+dir, 50*time.Millisecond })
	wait.Until(t, 30*time.Second, "both tasks to finish", func() bool {
		return stateOf(t, env, "r1", "go").Finished() && stateOf(t, env, "r1", "sh").Finished()
	})
	if s := stateOf(t, env, "r1", "go"); s != core.TISuccess {
		goTI, _ := env.Store.TaskInstanceGetByKey(ctx, "d", "r1", "go", -1)
		t.Fatalf("go task %s; log:\n%s", s, readLog(t, env, goTI))
	}
	x, err := env.Store.XComGet(ctx, "d", "r1", "go", -1, core.DefaultXComKey)
	if want := strconv.Itoa(2 * (len(big) + 2)); err != nil || string(x.Value) != want {
		t.Errorf("the Go task read back %v bytes (%v), want %s", x, err, want)
	}
	st, err := objstore.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	for kind, prefix := range map[core.StateKind]string{core.StateTask: "task/d/r1/go/-1/big/", core.StateAsset: "asset/events/big/"} {
		p := &store.StateListParams{Kind: kind, DagID: "d"}
		rows, err := env.Store.StateList(ctx, p)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s state rows = %.200v (%v), want one", kind, rows, err)
		}
		ref, ok := stateobj.Decode(rows[0].Value)
		if !ok || !strings.HasPrefix(ref, prefix) {
			t.Errorf("%s state row = %.200s, want only a reference under %s", kind, rows[0].Value, prefix)
		}
		if obj, err := st.Get(ctx, ref); err != nil || len(obj) != len(big)+2 {
			t.Errorf("object %s = %d bytes (%v), want %d", ref, len(obj), err, len(big)+2)
		}
	}
	// Rows removed on the server (here: the run's task state cleared): the
	// worker's sweeper deletes their objects.
	if _, err := env.Store.StateDelete(ctx, &store.StateDeleteParams{Scope: core.TaskScope("d", "r1", "go", -1)}); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, "the sweeper to delete the task state's object", func() bool {
		keys, err := st.List(ctx, "task/")
		return err == nil && len(keys) == 0
	})
	if keys, err := st.List(ctx, "asset/"); err != nil || len(keys) != 1 {
		t.Errorf("asset objects after the sweep = %v (%v), want the one whose row stays", keys, err)
	}
	shTI, _ := env.Store.TaskInstanceGetByKey(ctx, "d", "r1", "sh", -1)
	if s := readLog(t, env, shTI); !strings.Contains(s, "backend=file://"+dir+"\n") {
		t.Errorf("bash task log lacks WEIR_STATE_BACKEND:\n%s", s)
	}
}

// A bad state_backend stops the worker at start, naming it.
func TestWorkerStateBackendInvalid(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	w := &Worker{Client: env.WorkerClient(t, "w1"), WorkerID: "w1", StateBackend: "ftp://host/x"}
	err := w.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "[workers] state_backend") || !strings.Contains(err.Error(), "ftp") {
		t.Errorf("Start with a bad backend: %v", err)
	}
}
