package cli_test

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// seedLogs writes the log of the current try of etl/r1/load (seedState's)
// and gives run r1 a failure callback with one attempt and a log; it
// returns the callback's id.
func seedLogs(t *testing.T, s *surfaces) int64 {
	t.Helper()
	ctx, now := t.Context(), time.Now().UTC()
	logs := tasklog.Folder(s.logs)
	ti, err := s.st.TaskInstanceGetByKey(ctx, "etl", "r1", "load", core.NoMapIndex)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := logs.AppendAt(ctx, tasklog.KeyOf(ti), 0, []byte("loading 3 rows\nloaded\n")); err != nil {
		t.Fatal(err)
	}
	run, err := s.st.DagRunGet(ctx, "etl", "r1")
	if err != nil {
		t.Fatal(err)
	}
	cb := core.Callback{Level: core.CallbackDag, Event: core.OnFailure, DagID: "etl", RunID: "r1", DagRunID: run.ID,
		MapIndex: core.NoMapIndex, Spec: core.CallbackSpec{Command: "notify"}, Outcome: "failed", State: core.CallbackQueued}
	if err := s.st.CallbackInsert(ctx, []core.Callback{cb}, now); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.st.CallbackClaim(ctx, &store.CallbackClaimParams{WorkerID: "w1", Limit: 1, Now: now})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim the callback: %v, %d", err, len(claimed))
	}
	if _, err := logs.AppendAt(ctx, tasklog.CallbackKey(&claimed[0], 1), 0, []byte("paged the on-call\n")); err != nil {
		t.Fatal(err)
	}
	return claimed[0].ID
}

// firstWrite is a command's stdout that closes started on its first write.
type firstWrite struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		close(w.started)
	}
	return w.buf.Write(p)
}

// `weir tasks logs --follow` of a running try prints what is already
// written, then what the try writes next, and ends once the try is no
// longer running, locally and through the REST API alike, on SQLite and
// PostgreSQL.
func TestTaskLogsFollow(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		seedState(t, s.st)
		v, err := s.st.DagVersionLatest(ctx, "etl")
		if err != nil {
			t.Fatal(err)
		}
		logs := tasklog.Folder(s.logs)
		for _, side := range []struct {
			run string
			env []string
		}{{"live-l", s.env}, {"live-r", s.remoteEnv()}} {
			_, err := s.st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "etl", RunID: side.run, RunType: core.RunManual,
				State: core.RunRunning, DagVersionID: v.ID, Now: time.Now(), TaskInstances: []store.NewTaskInstance{{ID: uuid.NewString(),
					TaskID: "load", MapIndex: -1, MaxTries: 1, Operator: "noop", State: core.TIRunning}}})
			if err != nil {
				t.Fatal(err)
			}
			ti, err := s.st.TaskInstanceGetByKey(ctx, "etl", side.run, "load", core.NoMapIndex)
			if err != nil {
				t.Fatal(err)
			}
			key := tasklog.KeyOf(ti)
			if _, err := logs.AppendAt(ctx, key, 0, []byte("first\n")); err != nil {
				t.Fatal(err)
			}
			out := &firstWrite{started: make(chan struct{})}
			done := make(chan int, 1)
			go func() {
				done <- cli.Run(ctx, []string{"tasks", "logs", "etl", side.run, "load", "--follow"},
					cli.Options{Stdin: strings.NewReader(""), Stdout: out, Stderr: io.Discard, Environ: side.env})
			}()
			<-out.started
			if _, err := logs.AppendAt(ctx, key, 6, []byte("second\n")); err != nil {
				t.Fatal(err)
			}
			svc := service.New(service.Config{Store: s.st})
			if _, err := svc.MarkTaskInstance(ctx, core.System, core.TIKey{DagID: "etl", RunID: side.run, TaskID: "load", MapIndex: -1}, core.TISuccess); err != nil {
				t.Fatal(err)
			}
			code := <-done
			out.mu.Lock()
			got := out.buf.String()
			out.mu.Unlock()
			if code != 0 || got != "first\nsecond\n" {
				t.Errorf("follow of %s: exit %d, %q; want both lines", side.run, code, got)
			}
		}
	})
}

// `weir runs callback-logs --follow` of a running callback's attempt
// prints what is already written, then what it writes next, and ends once
// the attempt has ended, locally and through the REST API alike.
func TestCallbackLogsFollow(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		seedState(t, s.st)
		logs := tasklog.Folder(s.logs)
		for _, env := range [][]string{s.env, s.remoteEnv()} {
			id := seedLogs(t, s) // a new callback each time, claimed: running
			cb, err := s.st.CallbackGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out := &firstWrite{started: make(chan struct{})}
			done := make(chan int, 1)
			go func() {
				done <- cli.Run(ctx, []string{"runs", "callback-logs", strconv.FormatInt(id, 10), "-f"},
					cli.Options{Stdin: strings.NewReader(""), Stdout: out, Stderr: io.Discard, Environ: env})
			}()
			<-out.started
			if _, err := logs.AppendAt(ctx, tasklog.CallbackKey(cb, 1), int64(len("paged the on-call\n")), []byte("acknowledged\n")); err != nil {
				t.Fatal(err)
			}
			if err := s.st.CallbackFinish(ctx, &store.CallbackFinishParams{ID: id, Attempt: 1, State: core.CallbackSuccess, Now: time.Now().UTC()}); err != nil {
				t.Fatal(err)
			}
			code := <-done
			out.mu.Lock()
			got := out.buf.String()
			out.mu.Unlock()
			if code != 0 || got != "paged the on-call\nacknowledged\n" {
				t.Errorf("follow of callback %d: exit %d, %q; want both lines", id, code, got)
			}
		}
	})
}
