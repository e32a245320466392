package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestHeartbeatWritesRowUntilStopped(t *testing.T) {
	ctx := context.Background()
	st := sqlitetest.Open(t)
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
