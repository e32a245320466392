package logstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/logstore"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/s3test"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

// clock is a settable clock, for upload retries and retention.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// try creates a run of one running task and returns its store, the id
// of the task instance and its log key.
func try(t *testing.T) (*sqlstore.Store, string, tasklog.Key) {
	t.Helper()
	ctx := t.Context()
	st := sqlitetest.Open(t)
	version, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: core.DAG{DagID: "etl", Tasks: []core.Task{{TaskID: "load", Operator: "noop"}}},
		Hash: "h", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	if _, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "r1", RunType: core.RunManual, State: core.RunRunning,
		DagVersionID: version, Now: time.Now(), TaskInstances: []store.NewTaskInstance{{ID: id, TaskID: "load", MapIndex: core.NoMapIndex,
			MaxTries: 1, Operator: "noop", State: core.TIRunning}}}); err != nil {
		t.Fatal(err)
	}
	ti, err := st.TaskInstanceGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return st, id, tasklog.KeyOf(ti)
}

// finish ends the try as its worker does, in success (a mark would leave
// its log to the worker's last lines for store.LateLogGrace).
func finish(t *testing.T, st *sqlstore.Store, id string) {
	t.Helper()
	if err := st.TaskInstanceFinish(t.Context(), &store.TaskInstanceFinishParams{ID: id, State: core.TISuccess, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// readAll reads key's whole log from logs.
func readAll(ctx context.Context, logs tasklog.Logs, key tasklog.Key) (string, error) {
	var out []byte
	for offset := int64(0); ; {
		data, next, err := logs.Read(ctx, key, offset)
		if err != nil {
			return string(out), err
		}
		if len(data) == 0 {
			return string(out), nil
		}
		out, offset = append(out, data...), next
	}
}

// With remote_base_log_folder, on SeaweedFS and on a shared folder, two
// api-servers sharing the database read a running try's log live,
// whichever received the chunks; once the try has ended the uploader
// stores it whole as one object (named as the log folder names the
// file), deletes its chunks, and both read it complete from the store;
// retention deletes the object and a read then says so.
func TestRemoteLogs(t *testing.T) {
	t.Parallel()
	for name, remote := range map[string]func(t *testing.T) string{
		"s3":     func(t *testing.T) string { return s3test.URL(t, "weir/logs") },
		"folder": func(t *testing.T) string { return filepath.Join(t.TempDir(), "shared-logs") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			url := remote(t)
			st, id, key := try(t)
			clk := &clock{now: time.Now()}
			opts := logstore.Options{Database: true, Remote: url}
			first, remoteStore, err := logstore.Open(opts, st, clk)
			if err != nil {
				t.Fatal(err)
			}
			second, _, err := logstore.Open(opts, st, clk)
			if err != nil {
				t.Fatal(err)
			}
			up := &logstore.Uploader{Remote: remoteStore, Clock: clk, Retention: time.Hour}
			if _, err := first.AppendAt(ctx, key, 0, []byte("line 1\n")); err != nil {
				t.Fatal(err)
			}
			if got, err := readAll(ctx, second, key); err != nil || got != "line 1\n" {
				t.Fatalf("the other api-server reads the running try's log %q, %v", got, err)
			}
			if _, err := second.AppendAt(ctx, key, 7, []byte("line 2\n")); err != nil {
				t.Fatal(err)
			}
			if n, err := up.UploadOnce(ctx); err != nil || n != 0 {
				t.Fatalf("uploaded %d logs of running tries (%v), want none", n, err)
			}
			finish(t, st, id)
			if n, err := up.UploadOnce(ctx); err != nil || n != 1 {
				t.Fatalf("uploaded %d logs after the try ended (%v), want 1", n, err)
			}
			name, _ := tasklog.Name(key)
			if _, _, err := st.TaskLogRead(ctx, name, 0, 100); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("the chunks of an uploaded log are still in the database: %v", err)
			}
			objects, err := objstore.Open(mustLocation(t, url))
			if err != nil {
				t.Fatal(err)
			}
			if data, err := objects.Get(ctx, name); err != nil || string(data) != "line 1\nline 2\n" {
				t.Errorf("object %s = %q, %v; want the whole log", name, data, err)
			}
			for i, logs := range []tasklog.Logs{first, second} {
				if got, err := readAll(ctx, logs, key); err != nil || got != "line 1\nline 2\n" {
					t.Errorf("api-server %d reads the uploaded log %q, %v", i+1, got, err)
				}
				if size, err := logs.Size(ctx, key); err != nil || size != 14 {
					t.Errorf("api-server %d: size %d, %v; want 14", i+1, size, err)
				}
			}
			clk.add(2 * time.Hour)
			if n, err := up.Prune(ctx, clk.Now().Add(-time.Hour)); err != nil || n != 1 {
				t.Fatalf("pruned %d uploaded logs (%v), want 1", n, err)
			}
			if _, err := objects.Get(ctx, name); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("the object of a pruned log: %v, want not found", err)
			}
			_, err = readAll(ctx, second, key)
			var missing *tasklog.MissingError
			if !errors.As(err, &missing) || !strings.Contains(err.Error(), "log_retention") {
				t.Errorf("reading a pruned log: %v, want it to say retention deleted it", err)
			}
		})
	}
}

// failing is an object store whose puts fail while down is set, as an
// unreachable bucket does.
type failing struct {
	objstore.Store
	mu   sync.Mutex
	down bool
}

func (f *failing) Put(ctx context.Context, key string, data []byte) error {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return errors.New("dial tcp 127.0.0.1:9: connection refused")
	}
	return f.Store.Put(ctx, key, data)
}

// A failed upload is recorded and retried after a back-off; meanwhile the
// log reads complete from its chunks. Once uploaded, an object deleted
// behind Weir's back reads as a missing log naming where it was, not as
// an empty one.
func TestRemoteUploadRetriedAndLostObjectSaysSo(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, id, key := try(t)
	clk := &clock{now: time.Now()}
	logs, remote, err := logstore.Open(logstore.Options{Database: true, Remote: filepath.Join(t.TempDir(), "shared")}, st, clk)
	if err != nil {
		t.Fatal(err)
	}
	objects := &failing{Store: remote.Objects, down: true}
	remote.Objects = objects
	up := &logstore.Uploader{Remote: remote, Clock: clk}
	if _, err := logs.AppendAt(ctx, key, 0, []byte("all of it\n")); err != nil {
		t.Fatal(err)
	}
	finish(t, st, id)
	if n, err := up.UploadOnce(ctx); err != nil || n != 0 {
		t.Fatalf("upload to a store that is down: %d, %v", n, err)
	}
	name, _ := tasklog.Name(key)
	rec, err := st.TaskLogGet(ctx, name)
	if err != nil || rec.Attempts != 1 || !strings.Contains(rec.Error, "connection refused") {
		t.Fatalf("record after a failed upload: %+v, %v", rec, err)
	}
	if got, err := readAll(ctx, logs, key); err != nil || got != "all of it\n" {
		t.Errorf("log while its upload fails = %q, %v; want it from the chunks", got, err)
	}
	objects.mu.Lock()
	objects.down = false
	objects.mu.Unlock()
	if n, err := up.UploadOnce(ctx); err != nil || n != 0 {
		t.Errorf("upload retried before its back-off: %d, %v", n, err)
	}
	clk.add(logstore.UploadEvery * 3)
	if n, err := up.UploadOnce(ctx); err != nil || n != 1 {
		t.Fatalf("upload retried after its back-off: %d, %v; want 1", n, err)
	}
	if got, err := readAll(ctx, logs, key); err != nil || got != "all of it\n" {
		t.Errorf("log after the retried upload = %q, %v", got, err)
	}
	// A process that reads no remote store, or another one, says so: not
	// that the object was deleted (a rolling change of the setting).
	for what, opts := range map[string]logstore.Options{
		"no remote_base_log_folder is set here":           {Database: true},
		"remote_base_log_folder is file://" + t.TempDir(): {Database: true, Remote: t.TempDir()},
	} {
		other, _, err := logstore.Open(opts, st, clk)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readAll(ctx, other, key); err == nil || !strings.Contains(err.Error(), "which this process does not read") {
			t.Errorf("reading an uploaded log where %s: %v", what, err)
		}
	}
	if err := remote.Objects.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(ctx, logs, key)
	var missing *tasklog.MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "was uploaded whole to file://") ||
		!strings.Contains(err.Error(), "object is not there") {
		t.Errorf("reading a log whose object was deleted: %v", err)
	}
}

// With log_store = folder and two api-servers that do not share their log
// folders, the one without the file says which api-server's folder holds
// the log and which settings fix it, instead of answering an empty log;
// a try that wrote nothing still reads empty; a file deleted by hand is
// named as such.
func TestFolderLogNotSharedSaysWhere(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, _, key := try(t)
	folderA, folderB := t.TempDir(), t.TempDir()
	a, _, err := logstore.Open(logstore.Options{Folder: folderA}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := logstore.Open(logstore.Options{Folder: folderB}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	silent := key
	silent.TryNumber++
	if got, err := readAll(ctx, b, silent); !tasklog.WroteNothing(err) || got != "" {
		t.Errorf("a try that wrote nothing reads %q, %v; want no log (shown empty)", got, err)
	}
	if _, err := a.AppendAt(ctx, key, 0, []byte("only on a\n")); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(ctx, b, key)
	var missing *tasklog.MissingError
	if !errors.As(err, &missing) {
		t.Fatalf("reading another api-server's log: %v, want a missing log", err)
	}
	for _, want := range []string{folderA, "another api-server", "base_log_folder", "log_store = database", "remote_base_log_folder"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing-log message %q does not name %q", err, want)
		}
	}
	p, _ := tasklog.Path(folderA, key)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(ctx, a, key); !errors.As(err, &missing) || !strings.Contains(err.Error(), "no longer there") {
		t.Errorf("reading a log file deleted by hand: %v", err)
	}
}

// A home whose log_store moves from folder to database (the default did,
// ADR 0044) still reads the tries' logs stored in its folder before, and a
// try that wrote nothing still reads empty; another folder's log is still
// named missing.
func TestFolderLogsReadAfterTheMoveToTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, _, key := try(t)
	folder := t.TempDir()
	before, _, err := logstore.Open(logstore.Options{Folder: folder}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.AppendAt(ctx, key, 0, []byte("kept in the folder\n")); err != nil {
		t.Fatal(err)
	}
	after, _, err := logstore.Open(logstore.Options{Database: true, Folder: folder}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(ctx, after, key); err != nil || got != "kept in the folder\n" {
		t.Errorf("the folder's log after the move reads %q, %v", got, err)
	}
	// A log a worker wrote into the folder itself (standalone's, `weir
	// dags test`'s) has no record, and is read all the same.
	direct := key
	direct.TryNumber += 2
	if _, err := tasklog.AppendAt(folder, direct, 0, []byte("written by the worker\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(ctx, after, direct); err != nil || got != "written by the worker\n" {
		t.Errorf("a log the worker wrote into the folder reads %q, %v", got, err)
	}
	if n, err := after.Size(ctx, direct); err != nil || n != int64(len("written by the worker\n")) {
		t.Errorf("its size = %d, %v", n, err)
	}
	silent := key
	silent.TryNumber++
	if got, err := readAll(ctx, after, silent); !tasklog.WroteNothing(err) || got != "" {
		t.Errorf("a try that wrote nothing reads %q, %v; want no log (shown empty)", got, err)
	}
	elsewhere, _, err := logstore.Open(logstore.Options{Database: true, Folder: t.TempDir()}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var missing *tasklog.MissingError
	if _, err := readAll(ctx, elsewhere, key); !errors.As(err, &missing) || !strings.Contains(err.Error(), folder) ||
		!strings.Contains(err.Error(), "while [logging] log_store was folder") {
		t.Errorf("reading the log with another folder configured: %v, want it named missing in %s", err, folder)
	}
}

// missesOnce answers the first TaskLogRead as if the log's first chunk
// were not committed yet, as a reader that looked just before the append
// did and then found its record.
type missesOnce struct {
	logstore.Store
	once sync.Once
}

func (s *missesOnce) TaskLogRead(ctx context.Context, key string, offset int64, limit int) ([]byte, int64, error) {
	missed := false
	s.once.Do(func() { missed = true })
	if missed {
		return nil, offset, fmt.Errorf("task log %s: %w", key, core.ErrNotFound)
	}
	return s.Store.TaskLogRead(ctx, key, offset, limit)
}

// A read that found no chunks and then the record written after the first
// chunk (a running try's log, read as its first bytes are stored) reads
// the log, not a missing one.
func TestDatabaseReadRacingTheFirstAppend(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, _, key := try(t)
	logs, _, err := logstore.Open(logstore.Options{Database: true}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := logs.AppendAt(ctx, key, 0, []byte("first line\n")); err != nil {
		t.Fatal(err)
	}
	racing, _, err := logstore.Open(logstore.Options{Database: true}, &missesOnce{Store: st}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(ctx, racing, key); err != nil || got != "first line\n" {
		t.Errorf("read = %q, %v; want the first line", got, err)
	}
}

// mustLocation is objstore.Location or a failed test.
func mustLocation(t *testing.T, raw string) string {
	t.Helper()
	u, err := objstore.Location(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// staleOnce answers the first TaskLogGet with the record as it was before
// the upload, as a reader that looked just before the uploader did.
type staleOnce struct {
	logstore.Store
	once sync.Once
}

func (s *staleOnce) TaskLogGet(ctx context.Context, key string) (*store.TaskLog, error) {
	rec, err := s.Store.TaskLogGet(ctx, key)
	s.once.Do(func() {
		if rec != nil {
			stale := *rec
			stale.StoredAt = nil
			rec = &stale
		}
	})
	return rec, err
}

// A read that saw the log not uploaded yet and then finds its chunks gone
// (the uploader stored it in between) reads the uploaded object, not a
// missing log.
func TestRemoteReadRacingTheUpload(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, id, key := try(t)
	logs, remote, err := logstore.Open(logstore.Options{Database: true, Remote: filepath.Join(t.TempDir(), "shared")}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := logs.AppendAt(ctx, key, 0, []byte("whole\n")); err != nil {
		t.Fatal(err)
	}
	finish(t, st, id)
	if n, err := (&logstore.Uploader{Remote: remote}).UploadOnce(ctx); err != nil || n != 1 {
		t.Fatalf("upload: %d, %v", n, err)
	}
	racing := *remote
	racing.Store = &staleOnce{Store: st}
	if data, _, err := racing.Read(ctx, key, 0); err != nil || string(data) != "whole\n" {
		t.Errorf("read racing the upload = %q, %v; want the uploaded log", data, err)
	}
}
