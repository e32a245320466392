package storetest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testWorkerHeartbeat: a worker's heartbeat records its job row (with its
// name and interval) and refreshes the tries it holds, only its own; the
// tries it no longer holds go stale for it.
func testWorkerHeartbeat(t *testing.T, f *fixture) {
	a, b, c, d := newTI("a", core.TIQueued), newTI("b", core.TIQueued), newTI("c", core.TIQueued), newTI("d", core.TIQueued)
	for i, ti := range []*store.NewTaskInstance{&a, &b, &c, &d} {
		ti.PriorityWeight = 10 - i // claim order: w1 gets a, b, c; w2 gets d
	}
	f.run("etl", "r1", a, b, c, d)
	_, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 3, Now: f.now})
	must(t, err, "claim w1")
	_, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w2", Limit: 1, Now: f.now})
	must(t, err, "claim w2")
	for _, id := range []string{a.ID, b.ID} {
		_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w1", Now: f.now})
		must(t, err, "start")
	}

	beat := f.at(time.Minute)
	job := core.Job{ID: "p1", Role: "worker", Hostname: "h", PID: 7, StartedAt: f.now, Heartbeat: beat, WorkerID: "w1", Interval: 5 * time.Second}
	// w1 holds a (running) and c (claimed); b was its previous life's; d is w2's.
	must(t, f.st.WorkerHeartbeat(f.ctx, &store.WorkerHeartbeatParams{Job: job, Holding: []string{a.ID, c.ID, d.ID, unknownID}}), "worker heartbeat")
	jobs, err := f.st.JobList(f.ctx)
	must(t, err, "list jobs")
	if len(jobs) != 1 || jobs[0].WorkerID != "w1" || jobs[0].Interval != 5*time.Second || !jobs[0].Heartbeat.Equal(beat) {
		t.Fatalf("job rows = %+v, want p1 of worker w1 beating every 5s", jobs)
	}
	stale, err := f.st.TaskInstanceStaleOfWorker(f.ctx, "w1", f.at(30*time.Second))
	must(t, err, "stale of w1")
	if diff := sortedDiff([]string{"b"}, taskIDs(stale)); diff != "" {
		t.Errorf("w1's stale tries (-want +got): the held ones were refreshed:\n%s", diff)
	}
	stale, err = f.st.TaskInstanceStaleOfWorker(f.ctx, "w2", f.at(30*time.Second))
	must(t, err, "stale of w2")
	if diff := sortedDiff([]string{"d"}, taskIDs(stale)); diff != "" {
		t.Errorf("w2's stale tries (-want +got): w1's heartbeat must not refresh them:\n%s", diff)
	}
	err = f.st.WorkerHeartbeat(f.ctx, &store.WorkerHeartbeatParams{Job: core.Job{ID: "p2", Role: "worker", Heartbeat: beat}})
	wantErr(t, err, core.ErrInvalid, "worker heartbeat without a worker id")
	beatPastALockedTry(t, f, job, a.ID, c.ID)
}

// beatPastALockedTry: on an engine with row locks, a worker's heartbeat
// does not wait for a try another transaction holds (an end in flight):
// it refreshes the others and skips that one, so the two cannot deadlock.
func beatPastALockedTry(t *testing.T, f *fixture, job core.Job, locked, free string) {
	db, ok := f.st.(interface{ DB() *sql.DB })
	if !ok || f.st.Dialect() != "postgres" {
		return // SQLite's one writer: a transaction holds the whole database
	}
	tx, err := db.DB().BeginTx(f.ctx, nil)
	must(t, err, "begin")
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(f.ctx, `UPDATE task_instance SET updated_at = updated_at WHERE id = $1`, locked)
	must(t, err, "lock a try")
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	job.Heartbeat = f.at(2 * time.Minute)
	must(t, f.st.WorkerHeartbeat(ctx, &store.WorkerHeartbeatParams{Job: job, Holding: []string{locked, free}}),
		"worker heartbeat beside a transaction holding one of its tries")
	stale, err := f.st.TaskInstanceStaleOfWorker(f.ctx, "w1", f.at(90*time.Second))
	must(t, err, "stale of w1")
	if diff := sortedDiff([]string{"a", "b"}, taskIDs(stale)); diff != "" {
		t.Errorf("w1's tries not refreshed by the beat (-want +got): only the locked a (and b, not held) should be:\n%s", diff)
	}
}
