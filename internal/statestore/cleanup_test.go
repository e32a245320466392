package statestore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

// docs/requirements.md#gc-1: cleanup removes expired rows in batches of
// state_cleanup_batch_size (a statement and commit each) or in one statement
// (0); never-expire rows, rows without expiry and unexpired rows stay; a dry
// run lists what would go, sorted by map index and key, and deletes nothing.
func TestCleanup(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		batch, wantBatches int
	}{{0, 1}, {2, 3}, {5, 2}} {
		t.Run(fmt.Sprintf("batch %d", c.batch), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, st, clk := newService(t, statestore.Config{CleanupBatchSize: c.batch, DefaultRetentionDays: 0})
			for i := range 5 {
				if _, err := svc.Set(ctx, sc, fmt.Sprintf("old%d", i), []byte(`1`), retention(t, "1h"), core.UserWriter("")); err != nil {
					t.Fatal(err)
				}
			}
			for key, r := range map[string]string{"forever": "never", "nodefault": "", "later": "48h"} {
				if _, err := svc.Set(ctx, sc, key, []byte(`1`), retention(t, r), core.UserWriter("")); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(2 * time.Hour)

			dry, err := svc.Cleanup(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(dry.Expired) != 5 || dry.Expired[0].Key != "old0" || dry.Expired[4].Key != "old4" || dry.Deleted != 0 {
				t.Fatalf("dry run = %+v, want old0..old4 listed and nothing deleted", dry)
			}
			if n := len(keys(t, st)); n != 8 {
				t.Fatalf("dry run deleted rows: %d left of 8", n)
			}
			rep, err := svc.Cleanup(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Deleted != 5 || rep.Batches != c.wantBatches {
				t.Errorf("cleanup deleted %d in %d batches, want 5 in %d", rep.Deleted, rep.Batches, c.wantBatches)
			}
			if got := keys(t, st); len(got) != 3 || got[0] != "forever" || got[1] != "later" || got[2] != "nodefault" {
				t.Errorf("left after cleanup: %v, want forever, later, nodefault", got)
			}
		})
	}
}

func keys(t *testing.T, st store.Store) []string {
	t.Helper()
	all, err := st.StateList(context.Background(), &store.StateListParams{Kind: core.StateTask, DagID: "d"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range all {
		out = append(out, e.Key)
	}
	return out
}
