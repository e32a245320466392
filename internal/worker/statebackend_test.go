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

// SPEC BE-2: with [workers] state_backend set, an in-process Go task's task
// state goes through the backend (a value over max_value_bytes is stored,
// only its reference reaches the database) and a bash task is told the
// backend in WEIR_STATE_BACKEND.
func TestWorkerStateBackend(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	dir := filepath.Join(t.TempDir(), "state")
	big := strings.Repeat("x", statestore.DefaultMaxValueBytes+1)
	reg := operator.NewRegistry()
	_ = reg.Register("big", func(ctx context.Context, tc operator.TaskContext) (any, error) {
		v, _ := json.Marshal(big)
		if err := tc.TaskState().TaskStateSet(ctx, "big", v, ""); err != nil {
			return nil, err
		}
		got, err := tc.TaskState().TaskStateGet(ctx, "big")
		return len(got), err
	})
	env.SeedRun(t, core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "go", Operator: operator.Go, Args: map[string]any{"function": "big"}},
		{TaskID: "sh", Operator: operator.Bash, Args: map[string]any{"bash_command": `echo "backend=$WEIR_STATE_BACKEND"`}},
	}}, "r1", "")
	startWorker(t, env, reg, func(w *Worker) { w.StateBackend = "file://" + dir })
	wait.Until(t, 30*time.Second, "both tasks to finish", func() bool {
		return stateOf(t, env, "r1", "go").Finished() && stateOf(t, env, "r1", "sh").Finished()
	})
	if s := stateOf(t, env, "r1", "go"); s != core.TISuccess {
		goTI, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "go", -1)
		t.Fatalf("go task %s; log:\n%s", s, readLog(t, env, goTI))
	}
	x, err := env.Store.XComGet(context.Background(), "d", "r1", "go", -1, core.DefaultXComKey)
	if want := strconv.Itoa(len(big) + 2); err != nil || string(x.Value) != want {
		t.Errorf("the Go task read back %v bytes (%v), want %s", x, err, want)
	}
	rows, err := env.Store.TaskStateList(context.Background(), &store.TaskStateListParams{DagID: "d"})
	if err != nil || len(rows) != 1 || string(rows[0].Value) != `{"__weir_state_ref__":"task/d/r1/go/-1/big"}` {
		t.Errorf("database rows = %.200v (%v), want only the reference of big", rows, err)
	}
	st, err := objstore.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if obj, err := st.Get(context.Background(), "task/d/r1/go/-1/big"); err != nil || len(obj) != len(big)+2 {
		t.Errorf("object = %d bytes (%v), want %d", len(obj), err, len(big)+2)
	}
	shTI, _ := env.Store.TaskInstanceGetByKey(context.Background(), "d", "r1", "sh", -1)
	if s := readLog(t, env, shTI); !strings.Contains(s, "backend=file://"+dir+"\n") {
		t.Errorf("bash task log lacks WEIR_STATE_BACKEND:\n%s", s)
	}
}

// SPEC BE-2: a bad state_backend stops the worker at start, naming it.
func TestWorkerStateBackendInvalid(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	w := &Worker{Client: env.WorkerClient(t, "w1"), WorkerID: "w1", StateBackend: "ftp://host/x"}
	err := w.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "[workers] state_backend") || !strings.Contains(err.Error(), "ftp") {
		t.Errorf("Start with a bad backend: %v", err)
	}
}
