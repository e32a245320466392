package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testTaskLogRecord: the record of where a try's log went lists, for
// upload, the remote logs of ended tries only (a later try, a finished
// or retrying state, a task instance gone; not a running or deferred
// one), one uploader at a time (the lease), after a failure's retry time;
// marking one uploaded deletes its chunks; retention lists uploaded logs
// by upload time, once.
func testTaskLogRecord(t *testing.T, f *fixture) {
	tis := []store.NewTaskInstance{newTI("done", core.TISuccess), newTI("busy", core.TIRunning),
		newTI("waiting", core.TIDeferred), newTI("retrying", core.TIUpForRetry)}
	f.run("logs", "r1", tis...)
	keyOf := func(task string) string { return "dag_id=logs/run_id=r1/task_id=" + task + "/attempt=1.log" }
	record := func(task, kind string, i int) {
		try := 1
		if ti, err := f.st.TaskInstanceGet(f.ctx, idOf(tis, task)); err == nil {
			try = max(ti.TryNumber, 1)
		}
		must(t, f.st.TaskLogRecord(f.ctx, &store.TaskLog{Key: keyOf(task), DagID: "logs", RunID: "r1", TaskID: task,
			MapIndex: core.NoMapIndex, TryNumber: try, Kind: kind, Location: "s3://bucket/logs", CreatedAt: f.at(time.Duration(i) * time.Second)}),
			"record "+task)
	}
	for i, task := range []string{"done", "busy", "waiting", "retrying", "gone"} {
		record(task, store.TaskLogRemote, i)
	}
	must(t, f.st.TaskLogRecord(f.ctx, &store.TaskLog{Key: "dag_id=logs/run_id=r1/task_id=x/attempt=1.log", DagID: "logs", RunID: "r1",
		TaskID: "x", MapIndex: core.NoMapIndex, TryNumber: 1, Kind: store.TaskLogDatabase, CreatedAt: f.now}), "record a database log")
	due := func(at time.Duration) []string {
		t.Helper()
		logs, err := f.st.TaskLogsToUpload(f.ctx, f.at(at), 10)
		must(t, err, "list logs to upload")
		var tasks []string
		for _, l := range logs {
			tasks = append(tasks, l.TaskID)
		}
		return tasks
	}
	if got, want := due(time.Minute), []string{"done", "retrying", "gone"}; !slices.Equal(got, want) {
		t.Fatalf("logs to upload = %v, want %v (ended tries, oldest first)", got, want)
	}
	leased, err := f.st.TaskLogLease(f.ctx, keyOf("done"), f.at(time.Minute), f.at(3*time.Minute))
	must(t, err, "lease")
	again, err := f.st.TaskLogLease(f.ctx, keyOf("done"), f.at(2*time.Minute), f.at(4*time.Minute))
	must(t, err, "lease again")
	if !leased || again {
		t.Errorf("lease = %t, a second lease while held = %t; want true, false", leased, again)
	}
	if got := due(2 * time.Minute); slices.Contains(got, "done") {
		t.Errorf("a leased log is listed for upload: %v", got)
	}
	must(t, f.st.TaskLogUploadFailed(f.ctx, keyOf("retrying"), "connection refused", f.at(time.Hour)), "upload failed")
	if got := due(30 * time.Minute); slices.Contains(got, "retrying") {
		t.Errorf("a failed upload is listed before its retry time: %v", got)
	}
	if got := due(2 * time.Hour); !slices.Contains(got, "retrying") {
		t.Errorf("a failed upload is not listed after its retry time: %v", got)
	}
	rec, err := f.st.TaskLogGet(f.ctx, keyOf("retrying"))
	must(t, err, "get record")
	if rec.Attempts != 1 || rec.Error != "connection refused" || rec.StoredAt != nil || rec.Kind != store.TaskLogRemote {
		t.Errorf("record after a failed upload = %+v", rec)
	}
	_, err = f.st.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: keyOf("done"), Data: []byte("hello\n"), Now: f.now})
	must(t, err, "append")
	must(t, f.st.TaskLogStored(f.ctx, keyOf("done"), "s3://bucket/logs/"+keyOf("done"), 6, f.at(time.Hour)), "mark uploaded")
	_, _, err = f.st.TaskLogRead(f.ctx, keyOf("done"), 0, 100)
	wantErr(t, err, core.ErrNotFound, "read the chunks of an uploaded log")
	rec, err = f.st.TaskLogGet(f.ctx, keyOf("done"))
	must(t, err, "get uploaded record")
	if rec.StoredAt == nil || !rec.StoredAt.Equal(f.at(time.Hour)) || rec.Size != 6 || rec.Location != "s3://bucket/logs/"+keyOf("done") {
		t.Errorf("uploaded record = %+v", rec)
	}
	if got := due(3 * time.Hour); slices.Contains(got, "done") {
		t.Errorf("an uploaded log is listed for upload: %v", got)
	}
	for _, c := range []struct {
		before time.Duration
		want   int
	}{{time.Hour, 0}, {time.Hour + time.Second, 1}} {
		old, err := f.st.TaskLogsStoredBefore(f.ctx, f.at(c.before), 10)
		must(t, err, "list uploaded logs")
		if len(old) != c.want {
			t.Errorf("uploaded before +%s: %d logs, want %d", c.before, len(old), c.want)
		}
	}
	must(t, f.st.TaskLogPruned(f.ctx, keyOf("done"), f.at(2*time.Hour)), "mark pruned")
	rec, err = f.st.TaskLogGet(f.ctx, keyOf("done"))
	must(t, err, "get a pruned record")
	if rec.PrunedAt == nil || !rec.PrunedAt.Equal(f.at(2*time.Hour)) {
		t.Errorf("pruned record = %+v", rec)
	}
	if old, err := f.st.TaskLogsStoredBefore(f.ctx, f.at(3*time.Hour), 10); err != nil || len(old) != 0 {
		t.Errorf("a pruned log is listed for pruning again: %v, %v", old, err)
	}
	_, err = f.st.TaskLogGet(f.ctx, keyOf("never"))
	wantErr(t, err, core.ErrNotFound, "get a record never written")
}

// idOf returns the id of task's instance among tis ("" when absent).
func idOf(tis []store.NewTaskInstance, task string) string {
	for _, ti := range tis {
		if ti.TaskID == task {
			return ti.ID
		}
	}
	return fmt.Sprintf("no-%s", task)
}

// testStoppedTryLog: a running try that someone else ends (a mark:
// TaskInstanceSetState) records when, a try that was not running does
// not; a remote log of the stopped try is uploaded only store.LateLogGrace
// after, when its worker's last lines are in.
func testStoppedTryLog(t *testing.T, f *fixture) {
	busy, idle := newTI("busy", core.TIRunning), newTI("idle", core.TIQueued)
	f.run("stop", "r1", busy, idle)
	_, err := f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{busy.ID, idle.ID}, To: core.TIFailed, Now: f.at(time.Minute)})
	must(t, err, "mark failed")
	for id, want := range map[string]*time.Time{busy.ID: ptr(f.at(time.Minute)), idle.ID: nil} {
		ti, err := f.st.TaskInstanceGet(f.ctx, id)
		must(t, err, "get")
		if (ti.StoppedAt == nil) != (want == nil) || (want != nil && !ti.StoppedAt.Equal(*want)) {
			t.Errorf("%s: stopped at %v, want %v", ti.TaskID, ti.StoppedAt, want)
		}
	}
	uploadAfterGrace(t, f, "stop", "stopped", f.at(time.Minute))
	// Its next try (a clear) is no stopped try.
	next := uuid.NewString()
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: busy.ID, NewID: next, To: core.TINone, Now: f.at(2 * time.Minute)}), "new try")
	if ti, err := f.st.TaskInstanceGet(f.ctx, next); err != nil || ti.StoppedAt != nil {
		t.Errorf("the next try: %+v, %v; want no stopped_at", ti, err)
	}
}

// testClearedTryLog: a clear of a running try archives it stopped at the
// clear, and TaskInstanceArchived finds it by its id; a try cleared before
// it ran is no stopped try. A remote log of the cleared running try is
// uploaded only store.LateLogGrace after the clear, as a marked one's.
func testClearedTryLog(t *testing.T, f *fixture) {
	busy, idle := newTI("busy", core.TIRunning), newTI("idle", core.TIQueued)
	f.run("clear", "r1", busy, idle)
	for _, ti := range []store.NewTaskInstance{busy, idle} {
		must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: ti.ID, NewID: uuid.NewString(), To: core.TINone,
			Now: f.at(time.Minute)}), "clear "+ti.TaskID)
	}
	for id, want := range map[string]*time.Time{busy.ID: ptr(f.at(time.Minute)), idle.ID: nil} {
		ti, err := f.st.TaskInstanceArchived(f.ctx, id)
		must(t, err, "get the archived try")
		if ti.ID != id || ti.TryNumber != 1 || (ti.StoppedAt == nil) != (want == nil) || (want != nil && !ti.StoppedAt.Equal(*want)) {
			t.Errorf("%s: archived try %s %d stopped at %v, want %s 1 stopped at %v", ti.TaskID, ti.ID, ti.TryNumber, ti.StoppedAt, id, want)
		}
	}
	_, err := f.st.TaskInstanceArchived(f.ctx, uuid.NewString())
	wantErr(t, err, core.ErrNotFound, "an archived try never written")

	uploadAfterGrace(t, f, "clear", "cleared", f.at(time.Minute))
}

// uploadAfterGrace records a remote log of try 1 of task busy in run r1 of
// dagID, stopped (how) by someone else at stopped, and checks that it is
// due for upload only store.LateLogGrace after.
func uploadAfterGrace(t *testing.T, f *fixture, dagID, how string, stopped time.Time) {
	t.Helper()
	key := "dag_id=" + dagID + "/run_id=r1/task_id=busy/attempt=1.log"
	must(t, f.st.TaskLogRecord(f.ctx, &store.TaskLog{Key: key, DagID: dagID, RunID: "r1", TaskID: "busy", MapIndex: core.NoMapIndex,
		TryNumber: 1, Kind: store.TaskLogRemote, Location: "s3://b/logs", CreatedAt: f.now}), "record")
	due := func(at time.Time) bool {
		logs, err := f.st.TaskLogsToUpload(f.ctx, at, 10)
		must(t, err, "logs to upload")
		return len(logs) == 1
	}
	if due(stopped.Add(store.LateLogGrace - time.Second)) {
		t.Errorf("the %s try's log is uploaded within the grace its worker has to ship its last lines", how)
	}
	if !due(stopped.Add(store.LateLogGrace + time.Second)) {
		t.Errorf("the %s try's log is not uploaded after the grace", how)
	}
}
