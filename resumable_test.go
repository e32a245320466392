package weir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// fakeSystem is an in-memory stand-in for an external job system (the one
// thing faked here: the task state store and the engine are real). It
// records what RunResumable asked of it.
type fakeSystem struct {
	mu      sync.Mutex
	jobs    map[string]string // job id → "running", "succeeded" or "failed"
	submits int
	polls   map[int]int // try number → PollUntilComplete calls
	results int
}

func newFakeSystem() *fakeSystem {
	return &fakeSystem{jobs: map[string]string{}, polls: map[int]int{}}
}

func (s *fakeSystem) set(id, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == "" {
		delete(s.jobs, id)
		return
	}
	s.jobs[id] = state
}

// fakeJob is one try's ResumableJob over a fakeSystem. On try 1 its
// PollUntilComplete leaves the job in try1Leaves ("" = the system forgets
// it) and fails, as a worker lost mid-poll would; on later tries it finishes
// the job (see PollStatus).
type fakeJob struct {
	sys        *fakeSystem
	tc         *TaskContext
	try1Leaves string
	statusErr  error // returned by Status on tries after the first
}

func (j *fakeJob) Submit(context.Context) (string, error) {
	j.sys.mu.Lock()
	defer j.sys.mu.Unlock()
	j.sys.submits++
	id := fmt.Sprintf("job-%d", j.sys.submits)
	j.sys.jobs[id] = "running"
	return id, nil
}

func (j *fakeJob) Status(_ context.Context, id string) (string, error) {
	if j.tc.TryNumber > 1 && j.statusErr != nil {
		return "", j.statusErr
	}
	j.sys.mu.Lock()
	defer j.sys.mu.Unlock()
	st, ok := j.sys.jobs[id]
	if !ok {
		return "", fmt.Errorf("job %s: %w", id, ErrJobNotFound)
	}
	if st == "running" && j.tc.TryNumber > 1 {
		j.sys.jobs[id] = "succeeded" // seen running once, then done
	}
	return st, nil
}

func (j *fakeJob) IsActive(s string) bool    { return s == "running" }
func (j *fakeJob) IsSucceeded(s string) bool { return s == "succeeded" }

func (j *fakeJob) PollUntilComplete(ctx context.Context, id string) (string, error) {
	j.sys.mu.Lock()
	j.sys.polls[j.tc.TryNumber]++
	j.sys.mu.Unlock()
	// The id must be in task state before any waiting starts.
	kept, _, err := GetState[string](ctx, j.tc, DefaultJobIDKey)
	if err != nil {
		return "", err
	}
	if kept != id {
		return "", fmt.Errorf("polling %s while task state holds %q", id, kept)
	}
	if j.tc.TryNumber == 1 {
		j.sys.set(id, j.try1Leaves)
		return "", errors.New("worker lost mid-poll")
	}
	return PollStatus[string](ctx, j, id, time.Millisecond)
}

func (j *fakeJob) Result(_ context.Context, id string) (any, error) {
	j.sys.mu.Lock()
	defer j.sys.mu.Unlock()
	j.sys.results++
	return "result of " + id, nil
}

// TestRunResumableRetryCases covers docs/requirements.md#r-1: what RunResumable does on a
// retry for each state the job from the failed try can be in. Each case runs
// a real DAG run in-process (`dags test` on SQLite: api-server, scheduler,
// worker, task state through the Execution API); try 1 submits and is lost
// mid-poll, try 2 decides.
func TestRunResumableRetryCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		try1Leaves  string // the job's state when try 2 starts; "" = unknown to the system
		statusErr   error
		opts        []ResumableOption
		wantOK      bool
		wantSubmits int
		wantPolls2  int    // PollUntilComplete calls on try 2
		wantKey     string // the job id left in task state; "" = none
	}{
		{name: "active job: reconnect and poll, no resubmission", try1Leaves: "running",
			wantOK: true, wantSubmits: 1, wantPolls2: 1, wantKey: "job-1"},
		{name: "succeeded job: result without polling or resubmission", try1Leaves: "succeeded",
			wantOK: true, wantSubmits: 1, wantPolls2: 0, wantKey: "job-1"},
		{name: "failed job: resubmit and overwrite the id", try1Leaves: "failed",
			wantOK: true, wantSubmits: 2, wantPolls2: 1, wantKey: "job-2"},
		{name: "job not found: resubmit and overwrite the id", try1Leaves: "",
			wantOK: true, wantSubmits: 2, wantPolls2: 1, wantKey: "job-2"},
		{name: "status error: fail the try, never resubmit", try1Leaves: "running", statusErr: errors.New("connection refused"),
			wantOK: false, wantSubmits: 1, wantPolls2: 0, wantKey: "job-1"},
		{name: "ClearJobIDOnSuccess forgets the id", try1Leaves: "running", opts: []ResumableOption{ClearJobIDOnSuccess()},
			wantOK: true, wantSubmits: 1, wantPolls2: 1, wantKey: ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sys := newFakeSystem()
			dagID := fmt.Sprintf("resumable_%d", i)
			d := NewDAG(dagID)
			d.Go("run_job", func(ctx context.Context, tc *TaskContext) (any, error) {
				return RunResumable(ctx, tc, &fakeJob{sys: sys, tc: tc, try1Leaves: c.try1Leaves, statusErr: c.statusErr}, c.opts...)
			}, Retries(1), RetryDelay(time.Second))

			home := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"dags", "test", dagID, "--home", home}, &stdout, &stderr, []*DAG{d})
			if (code == 0) != c.wantOK {
				t.Fatalf("exit code %d, want success %t\nstdout:\n%s\nstderr:\n%s", code, c.wantOK, stdout.String(), stderr.String())
			}
			if sys.submits != c.wantSubmits || sys.polls[2] != c.wantPolls2 {
				t.Errorf("submits %d, polls on try 2 %d; want %d and %d", sys.submits, sys.polls[2], c.wantSubmits, c.wantPolls2)
			}
			st := openStore(t, home)
			if c.wantOK {
				wantJob := "job-" + fmt.Sprint(c.wantSubmits)
				if v := returnValue(t, st, dagID, "run_job", -1); v != fmt.Sprintf("%q", "result of "+wantJob) {
					t.Errorf("run_job returned %s, want the result of %s", v, wantJob)
				}
			}
			got := taskStateOf(t, st, dagID)
			want := fmt.Sprintf("[%s=%q never=true]", DefaultJobIDKey, c.wantKey)
			if c.wantKey == "" {
				want = "[]"
			}
			if fmt.Sprint(got) != want {
				t.Errorf("task state = %v, want %s", got, want)
			}
		})
	}
}

// TestRunResumableJobFails: a job that ends without success fails the try
// with ErrJobFailed (docs/requirements.md#r-1), and the id stays for the next try to see.
func TestRunResumableJobFails(t *testing.T) {
	t.Parallel()
	sys := newFakeSystem()
	var runErr error
	d := NewDAG("resumable_fails")
	d.Go("run_job", func(ctx context.Context, tc *TaskContext) (any, error) {
		job := &failingJob{fakeJob{sys: sys, tc: tc}}
		_, runErr = RunResumable(ctx, tc, job, JobIDKey("spark_job"))
		return nil, runErr
	})
	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", "resumable_fails", "--home", home}, &stdout, &stderr, []*DAG{d}); code == 0 {
		t.Fatalf("the run succeeded although its job failed\n%s", stdout.String())
	}
	if !errors.Is(runErr, ErrJobFailed) {
		t.Errorf("RunResumable error = %v, want one wrapping ErrJobFailed", runErr)
	}
	if got := taskStateOf(t, openStore(t, home), "resumable_fails"); fmt.Sprint(got) != `[spark_job="job-1" never=true]` {
		t.Errorf("task state = %v, want spark_job job-1 kept", got)
	}
}

// taskStateOf lists the task state of dagID's newest run as
// `key=value never=bool` lines.
func taskStateOf(t *testing.T, st store.Store, dagID string) []string {
	t.Helper()
	entries, err := st.StateList(t.Context(), &store.StateListParams{Kind: core.StateTask, DagID: dagID, RunID: latestRun(t, st, dagID).RunID})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s=%s never=%t", e.Key, e.Value, e.NeverExpire))
	}
	return got
}

// failingJob's PollUntilComplete ends the job as failed.
type failingJob struct{ fakeJob }

func (j *failingJob) PollUntilComplete(context.Context, string) (string, error) {
	return "failed", nil
}

// TestPollStatusRefusesNonPositiveInterval: a zero interval would spin.
func TestPollStatusRefusesNonPositiveInterval(t *testing.T) {
	t.Parallel()
	if _, err := PollStatus[string](t.Context(), &fakeJob{}, "job-1", 0); err == nil {
		t.Error("PollStatus accepted a zero interval")
	}
}
