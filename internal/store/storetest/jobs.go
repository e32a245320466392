package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

// testJobPrune: a job row keeps the version its process wrote; pruning
// deletes exactly the rows silent since before the cut-off (stopped
// processes), counts them, and leaves the live ones as they were.
func testJobPrune(t *testing.T, f *fixture) {
	rows := []core.Job{
		{ID: "old-sched", Role: "scheduler", Hostname: "h1", PID: 1, StartedAt: f.now, Heartbeat: f.now, Version: "1.0.0"},
		{ID: "old-worker", Role: "worker", Hostname: "h2", PID: 2, StartedAt: f.now, Heartbeat: f.at(time.Minute),
			WorkerID: "w1", Interval: 5 * time.Second, Version: "1.0.0"},
		{ID: "live-api", Role: "api-server", Hostname: "h3", PID: 3, StartedAt: f.now, Heartbeat: f.at(time.Hour),
			Interval: 2 * time.Second, Version: "1.1.0"},
	}
	for i := range rows {
		must(t, f.st.JobHeartbeat(f.ctx, &rows[i]), "heartbeat "+rows[i].ID)
	}
	n, err := f.st.JobPrune(f.ctx, f.at(time.Minute))
	must(t, err, "prune before 1m")
	if n != 1 {
		t.Errorf("pruned %d rows before 1m, want 1 (old-sched; old-worker beat at exactly 1m)", n)
	}
	n, err = f.st.JobPrune(f.ctx, f.at(30*time.Minute))
	must(t, err, "prune before 30m")
	if n != 1 {
		t.Errorf("pruned %d rows before 30m, want 1 (old-worker)", n)
	}
	jobs, err := f.st.JobList(f.ctx)
	must(t, err, "list jobs")
	if diff := cmp.Diff([]core.Job{rows[2]}, jobs); diff != "" {
		t.Errorf("jobs after pruning (-want +got), the live row with its version:\n%s", diff)
	}
	n, err = f.st.JobPrune(f.ctx, f.at(30*time.Minute))
	must(t, err, "prune again")
	if n != 0 {
		t.Errorf("pruning again deleted %d rows, want 0", n)
	}
}

// testJobDeleteOfProcess: the rows of one process (hostname and pid) go,
// whatever their roles; another host's process of the same pid stays.
func testJobDeleteOfProcess(t *testing.T, f *fixture) {
	rows := []core.Job{
		{ID: "api", Role: "api-server", Hostname: "h1", PID: 7, StartedAt: f.now, Heartbeat: f.now},
		{ID: "trig", Role: "triggerer", Hostname: "h1", PID: 7, StartedAt: f.now, Heartbeat: f.now},
		{ID: "elsewhere", Role: "worker", Hostname: "h2", PID: 7, StartedAt: f.now, Heartbeat: f.now, WorkerID: "w"},
		{ID: "sibling", Role: "scheduler", Hostname: "h1", PID: 8, StartedAt: f.now, Heartbeat: f.now},
	}
	for i := range rows {
		must(t, f.st.JobHeartbeat(f.ctx, &rows[i]), "heartbeat "+rows[i].ID)
	}
	n, err := f.st.JobDeleteOfProcess(f.ctx, "h1", 7)
	must(t, err, "delete process h1/7")
	jobs, err := f.st.JobList(f.ctx)
	must(t, err, "list jobs")
	var left []string
	for _, j := range jobs {
		left = append(left, j.ID)
	}
	if n != 2 || !slices.Equal(left, []string{"sibling", "elsewhere"}) {
		t.Errorf("deleted %d, left %v; want 2 deleted and the other host's and the other process's rows left", n, left)
	}
}

// testWorkerLastBeat: the latest heartbeat among a worker's processes (a
// restarted worker has a row per life), not another worker's nor another
// role's; none for a worker never heard.
func testWorkerLastBeat(t *testing.T, f *fixture) {
	rows := []core.Job{
		{ID: "w1-old", Role: "worker", Hostname: "h1", PID: 1, StartedAt: f.now, Heartbeat: f.at(time.Minute), WorkerID: "w1", Interval: 5 * time.Second},
		{ID: "w1-new", Role: "worker", Hostname: "h1", PID: 2, StartedAt: f.now, Heartbeat: f.at(2 * time.Minute), WorkerID: "w1", Interval: 3 * time.Second},
		{ID: "w2", Role: "worker", Hostname: "h2", PID: 3, StartedAt: f.now, Heartbeat: f.at(time.Hour), WorkerID: "w2", Interval: 5 * time.Second},
		{ID: "sched", Role: "scheduler", Hostname: "h1", PID: 4, StartedAt: f.now, Heartbeat: f.at(time.Hour)},
	}
	for i := range rows {
		must(t, f.st.JobHeartbeat(f.ctx, &rows[i]), "heartbeat "+rows[i].ID)
	}
	j, err := f.st.WorkerLastBeat(f.ctx, "w1")
	must(t, err, "last beat of w1")
	if diff := cmp.Diff(rows[1], *j); diff != "" {
		t.Errorf("w1's last beat (-want +got):\n%s", diff)
	}
	_, err = f.st.WorkerLastBeat(f.ctx, "w9")
	wantErr(t, err, core.ErrNotFound, "last beat of a worker never heard")
}
