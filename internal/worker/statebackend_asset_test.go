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
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// SPEC BE-2 for asset state: with [workers] state_backend set, an
// in-process Go task's asset state goes through the backend: a value over
// max_value_bytes written by uri is stored under the asset's name, read
// back by name, and only its reference reaches the database.
func TestWorkerStateBackendAssetState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := execapitest.New(t, execapi.Config{})
	dir := filepath.Join(t.TempDir(), "state")
	events := core.Asset{Name: "events", URI: "s3://lake/events"}
	big := strings.Repeat("x", statestore.DefaultMaxValueBytes+1)
	reg := operator.NewRegistry()
	_ = reg.Register("big", func(ctx context.Context, tc operator.TaskContext) (any, error) {
		v, _ := json.Marshal(big)
		if err := tc.AssetState().AssetStateSet(ctx, core.AssetRef{URI: events.URI}, "big", v); err != nil {
			return nil, err
		}
		got, err := tc.AssetState().AssetStateGet(ctx, core.AssetRef{Name: events.Name}, "big")
		return len(got), err
	})
	dag := core.DAG{DagID: "d", Assets: []core.Asset{events}, Tasks: []core.Task{
		{TaskID: "go", Operator: operator.Go, Args: map[string]any{"function": "big"}, Outlets: []core.AssetRef{{Name: events.Name}}},
	}}
	env.SeedRun(t, dag, "r1", "")
	if err := env.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, env, reg, func(w *Worker) { w.StateBackend = "file://" + dir })
	wait.Until(t, 30*time.Second, "the Go task to finish", func() bool { return stateOf(t, env, "r1", "go").Finished() })
	if s := stateOf(t, env, "r1", "go"); s != core.TISuccess {
		ti, _ := env.Store.TaskInstanceGetByKey(ctx, "d", "r1", "go", -1)
		t.Fatalf("go task %s; log:\n%s", s, readLog(t, env, ti))
	}
	x, err := env.Store.XComGet(ctx, "d", "r1", "go", -1, core.DefaultXComKey)
	if want := strconv.Itoa(len(big) + 2); err != nil || string(x.Value) != want {
		t.Errorf("the Go task read back %v bytes (%v), want %s", x, err, want)
	}
	rows, err := env.Store.AssetStateList(ctx, 0)
	if err != nil || len(rows) != 1 || string(rows[0].Value) != `{"__weir_state_ref__":"asset/events/big"}` {
		t.Errorf("database rows = %.200v (%v), want only the reference of big", rows, err)
	}
	st, err := objstore.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if obj, err := st.Get(ctx, "asset/events/big"); err != nil || len(obj) != len(big)+2 {
		t.Errorf("object = %d bytes (%v), want %d", len(obj), err, len(big)+2)
	}
}
