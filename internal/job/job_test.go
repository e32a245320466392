package job_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store/sqlite"
)

func TestHeartbeatWritesRowUntilStopped(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- (&job.Heartbeat{Store: st, Role: "scheduler", Interval: time.Hour}).Start(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		jobs, err := st.JobList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 1 && jobs[0].Role == "scheduler" && !jobs[0].Heartbeat.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scheduler job row written: %+v", jobs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Start returned %v after cancel, want nil", err)
	}
}
