package statestore_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// docs/requirements.md#gc-2: the periodic Cleaner, with nobody calling Cleanup, deletes
// expired task-state rows and the state of assets inactive past
// asset_state_orphan_retention_days, again on later ticks (rows that
// expire after its first run go too), logs what it deleted, never touches
// never-expire rows, rows without expiry, unexpired rows or an active
// asset's state, and stops with its context.
func TestCleanerRunsPeriodically(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, clk := newService(t, statestore.Config{AssetOrphanRetentionDays: 1})
	set := func(key, ret string) {
		t.Helper()
		if _, err := svc.Set(ctx, sc, key, []byte(`1`), retention(t, ret), core.UserWriter("")); err != nil {
			t.Fatal(err)
		}
	}
	for key, ret := range map[string]string{"old": "1h", "forever": "never", "nodefault": "", "soon": "3h", "later": "48h"} {
		set(key, ret)
	}
	defineAssets(t, st, orders, customers)
	for _, a := range []string{"orders", "customers"} {
		if _, err := svc.Set(ctx, core.AssetScopeByName(a), "watermark", []byte(`7`), statevalue.Retention{},
			core.UserWriter("u")); err != nil {
			t.Fatal(err)
		}
	}
	defineAssets(t, st, orders) // customers inactive since t0
	clk.Advance(2 * time.Hour)  // old has expired; soon, later not yet

	var log syncbuf.Buffer
	c := &statestore.Cleaner{Service: svc, Interval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Start(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	wait.Until(t, 30*time.Second, "the cleaner to delete the expired row old", func() bool {
		return !slices.Contains(keys(t, st), "old")
	})
	if got := keys(t, st); !slices.Equal(got, []string{"forever", "later", "nodefault", "soon"}) {
		t.Errorf("task state after the first cleanup: %v, want forever, later, nodefault, soon", got)
	}

	// Later ticks: soon expires and goes, and the asset inactive for more
	// than a day is swept; the rest stays.
	clk.Advance(2 * 24 * time.Hour)
	wait.Until(t, 30*time.Second, "the cleaner to delete soon, later and customers' state", func() bool {
		rows, err := allAssetState(t, st)
		return err == nil && len(rows) == 1 && slices.Equal(keys(t, st), []string{"forever", "nodefault"})
	})
	rows, err := allAssetState(t, st)
	if err != nil || len(rows) != 1 || rows[0].Scope.AssetName != "orders" {
		t.Errorf("asset state after the sweep: %+v (%v), want orders' watermark only", rows, err)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start returned %v after its context ended, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cleaner did not stop after its context ended")
	}
	done <- nil // for the cleanup's receive
	if s := log.String(); !strings.Contains(s, "task state cleanup") || !strings.Contains(s, "orphaned_asset_state_deleted=1") {
		t.Errorf("the cleaner's log does not report its deletions:\n%s", s)
	}
}
