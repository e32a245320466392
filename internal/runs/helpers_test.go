package runs_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
)

// fakeClock is a settable core.Clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// newStore opens a migrated SQLite store in a temporary directory.
func newStore(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

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
