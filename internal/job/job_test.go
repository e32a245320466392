package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestHeartbeatWritesRowUntilStopped(t *testing.T) {
	ctx := context.Background()
	st := sqlitetest.Open(t)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- (&job.Heartbeat{Store: st, Role: "scheduler", Interval: time.Hour, Version: "9.9.9"}).Start(runCtx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		jobs, err := st.JobList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 1 && jobs[0].Role == "scheduler" && !jobs[0].Heartbeat.IsZero() && jobs[0].Version == "9.9.9" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scheduler job row with its version written: %+v", jobs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Start returned %v after cancel, want nil", err)
	}
}

// A pruner deletes the rows of processes silent for longer than its
// retention and keeps the others, versions included; 0 never prunes.
func TestPrunerDeletesOnlyLongSilentRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, j := range []core.Job{
		{ID: "gone", Role: "worker", Hostname: "h", StartedAt: now.Add(-3 * time.Hour), Heartbeat: now.Add(-2 * time.Hour), Version: "1.0"},
		{ID: "recent", Role: "worker", Hostname: "h", StartedAt: now.Add(-3 * time.Hour), Heartbeat: now.Add(-30 * time.Minute), Version: "1.1"},
	} {
		if err := st.JobHeartbeat(ctx, &j); err != nil {
			t.Fatal(err)
		}
	}
	if err := (&job.Pruner{What: "job rows", Prune: st.JobPrune, Retention: 0}).Start(ctx); err != nil {
		t.Fatalf("retention 0: Start = %v, want nil at once", err)
	}
	if n, err := (&job.Pruner{What: "job rows", Prune: st.JobPrune, Retention: time.Hour}).PruneOnce(ctx, now); err != nil || n != 1 {
		t.Fatalf("PruneOnce = %d, %v; want 1 row", n, err)
	}
	jobs, err := st.JobList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != "recent" || jobs[0].Version != "1.1" {
		t.Errorf("rows after pruning = %+v, want only the recent one with its version", jobs)
	}
}
