package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// syncDAG records spec as an active, unpaused DAG.
func syncDAG(t *testing.T, st store.Store, spec core.DAG) {
	t.Helper()
	if _, _, err := st.DagSync(context.Background(), &store.DagSyncParams{
		Spec: spec, Hash: spec.DagID + "-hash", Now: t0,
	}); err != nil {
		t.Fatal(err)
	}
}

func listTIs(t *testing.T, st store.Store, runID int64) map[string]core.TaskInstance {
	t.Helper()
	tis, err := st.TaskInstanceList(context.Background(), &store.TaskInstanceListParams{DagRunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]core.TaskInstance{}
	for _, ti := range tis {
		out[ti.TaskID] = ti
	}
	return out
}
